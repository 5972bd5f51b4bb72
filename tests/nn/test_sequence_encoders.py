"""Tests of neuromath/nn/sequence_encoders.py: padding, the recurrences written out, and learning a tiny task."""

import math

import pytest
import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.sequence_encoders import StackRNNEncoder
from neuromath.registry import SEQUENCE_ENCODERS

ENCODER_NAMES = ["rnn", "lstm", "stack_rnn"]
PAD = 0


def build(name, vocab_size=5, hidden_size=6, stack_depth=4, seed=0):
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return SEQUENCE_ENCODERS.get(name)(vocab_size, hidden_size, pad_id=PAD, stack_depth=stack_depth).double()


def batch(sequences, width):
    token_ids = torch.full((len(sequences), width), PAD, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        token_ids[row, : len(sequence)] = torch.tensor(sequence)
    return token_ids, torch.tensor([len(sequence) for sequence in sequences])


SEQUENCES = [[1, 2, 3], [4], [2, 2, 1, 3, 4], [3, 1]]


def test_the_three_encoders_are_registered():
    assert set(ENCODER_NAMES) <= set(SEQUENCE_ENCODERS.names())


@pytest.mark.parametrize("name", ENCODER_NAMES)
def test_padding_and_tokens_after_the_end_do_not_change_the_result(name):
    encoder = build(name)
    short_ids, lengths = batch(SEQUENCES, width=5)
    long_ids, _ = batch(SEQUENCES, width=9)
    garbage_ids = long_ids.clone()
    for row, length in enumerate(lengths.tolist()):
        garbage_ids[row, length:] = 1 + (torch.arange(9 - length) % 4)  # real tokens, but past the end
    reference = encoder(short_ids, lengths)
    assert reference.shape == (4, 6)
    torch.testing.assert_close(encoder(long_ids, lengths), reference)
    torch.testing.assert_close(encoder(garbage_ids, lengths), reference)


@pytest.mark.parametrize("name", ENCODER_NAMES)
def test_each_row_equals_the_sequence_encoded_alone(name):
    encoder = build(name)
    token_ids, lengths = batch(SEQUENCES, width=5)
    together = encoder(token_ids, lengths)
    for row, sequence in enumerate(SEQUENCES):
        alone = encoder(torch.tensor([sequence]), torch.tensor([len(sequence)]))
        torch.testing.assert_close(together[row : row + 1], alone)


def test_rnn_equals_the_elman_recurrence_written_out():
    encoder = build("rnn")
    recurrent = encoder.recurrent
    token_ids, lengths = batch(SEQUENCES, width=5)
    encoded = encoder(token_ids, lengths)
    for row, sequence in enumerate(SEQUENCES):
        hidden = torch.zeros(6, dtype=torch.float64)
        for token in sequence:
            x = encoder.embedding.weight[token]
            input_term = recurrent.weight_ih_l0 @ x + recurrent.bias_ih_l0
            hidden = torch.tanh(input_term + recurrent.weight_hh_l0 @ hidden + recurrent.bias_hh_l0)
        torch.testing.assert_close(encoded[row], hidden)


def test_stack_rnn_two_steps_by_hand():
    encoder = StackRNNEncoder(vocab_size=2, hidden_size=1, pad_id=0, stack_depth=2).double()
    with torch.no_grad():
        encoder.embedding.weight.copy_(torch.tensor([[0.0], [0.5]]))
        encoder.input_to_hidden.weight.fill_(2.0)
        encoder.input_to_hidden.bias.zero_()
        encoder.hidden_to_hidden.weight.fill_(1.0)
        encoder.stack_to_hidden.weight.fill_(3.0)
        encoder.controller.action.weight.copy_(torch.tensor([[1.0], [0.0], [-1.0]]))
        encoder.controller.action.bias.zero_()
        encoder.controller.push_value.weight.fill_(2.0)
        encoder.controller.push_value.bias.zero_()

    def actions(h):
        total = math.exp(h) + 1.0 + math.exp(-h)
        return math.exp(h) / total, 1.0 / total, math.exp(-h) / total  # push, pop, no-op

    def sigmoid(v):
        return 1.0 / (1.0 + math.exp(-v))

    # step 1 from h = 0 and an empty stack [0, 0]: x = 0.5
    h1 = math.tanh(2 * 0.5)
    push, pop, noop = actions(h1)
    stack1 = [push * sigmoid(2 * h1), 0.0]  # below the new top everything is still zero
    # step 2: the top of the stack is read into the recurrence
    h2 = math.tanh(2 * 0.5 + h1 + 3 * stack1[0])
    push, pop, noop = actions(h2)
    stack2 = [push * sigmoid(2 * h2) + pop * stack1[1] + noop * stack1[0], push * stack1[0] + noop * stack1[1]]
    # step 3 reads stack2's top
    h3 = math.tanh(2 * 0.5 + h2 + 3 * stack2[0])

    encoded = encoder(torch.tensor([[1, 1, 1], [1, 1, 0]]), torch.tensor([3, 2]))
    torch.testing.assert_close(encoded, torch.tensor([[h3], [h2]], dtype=torch.float64))
    hidden, stack = encoder.step(
        encoder.embedding.weight[1].unsqueeze(0), torch.tensor([[h1]], dtype=torch.float64),
        torch.tensor([[[stack1[0]], [stack1[1]]]], dtype=torch.float64),
    )
    torch.testing.assert_close(hidden, torch.tensor([[h2]], dtype=torch.float64))
    torch.testing.assert_close(stack, torch.tensor([[[stack2[0]], [stack2[1]]]], dtype=torch.float64))


def test_bad_inputs_are_rejected():
    with pytest.raises(ConfigError):
        SEQUENCE_ENCODERS.get("rnn")(4, 8, pad_id=4)
    with pytest.raises(ConfigError):
        SEQUENCE_ENCODERS.get("stack_rnn")(4, 8, stack_depth=0)
    encoder = build("lstm")
    with pytest.raises(ValueError, match="length"):
        encoder(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 0]))
    with pytest.raises(ValueError, match="length"):
        encoder(torch.ones(2, 3, dtype=torch.long), torch.tensor([4, 1]))



def first_equals_last_data(n, generator):
    """Sequences of 2..6 tokens from {1, 2, 3}; half of them end with their first token. Label: first == last."""
    lengths = torch.randint(2, 7, (n,), generator=generator)
    token_ids = torch.randint(1, 4, (n, 6), generator=generator)
    labels = torch.rand(n, generator=generator) < 0.5
    rows = torch.arange(n)
    last = lengths - 1
    other = 1 + (token_ids[:, 0] - 1 + torch.randint(1, 3, (n,), generator=generator)) % 3  # differs from the first
    token_ids[rows, last] = torch.where(labels, token_ids[:, 0], other)
    token_ids[torch.arange(6).unsqueeze(0) >= lengths.unsqueeze(1)] = PAD
    return token_ids, lengths, labels.double()


@pytest.mark.parametrize("name", ENCODER_NAMES)
def test_each_encoder_learns_whether_the_first_token_equals_the_last(name, one_thread):
    generator = torch.Generator().manual_seed(1)
    train_ids, train_lengths, train_labels = first_equals_last_data(512, generator)
    test_ids, test_lengths, test_labels = first_equals_last_data(256, generator)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = SEQUENCE_ENCODERS.get(name)(4, 16, pad_id=PAD, stack_depth=4)
        head = nn.Linear(16, 1)
    parameters = list(encoder.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(parameters, lr=0.02)
    for step in range(150):
        start = (step * 64) % 512
        rows = slice(start, start + 64)
        logits = head(encoder(train_ids[rows], train_lengths[rows])).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, train_labels[rows].float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        predictions = head(encoder(test_ids, test_lengths)).squeeze(-1) > 0
    accuracy = (predictions == test_labels.bool()).double().mean().item()
    assert accuracy > 0.9, f"{name} reached only {accuracy:.2f}"
