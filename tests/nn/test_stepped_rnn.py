"""The stepped GRU and LSTM (neuromath/nn/stepped_rnn.py) give the states, final states and gradients of the
torch.nn module they run, over packed batches of any lengths; run_packed uses them on the CPU."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from neuromath.nn import sequence_encoders
from neuromath.nn.sequence_encoders import realigned_supports, run_packed, run_realigned
from neuromath.nn.stepped_rnn import stepped, supports


def module_run(rnn, embedded, valid):
    """What run_packed did before: the module itself over the packed batch."""
    lengths = valid.sum(dim=1).clamp(min=1)
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    outputs, final = rnn(packed)
    states, _ = pad_packed_sequence(outputs, batch_first=True, total_length=embedded.size(1))
    return states, final


def flat(final):
    return torch.cat(final) if isinstance(final, tuple) else final


def compare(mode, bidirectional, layers, lengths, width=6, seed=0, run=stepped, bias=True):
    torch.manual_seed(seed)
    rnn = getattr(nn, mode)(5, width, layers, batch_first=True, bidirectional=bidirectional, bias=bias).double()
    steps = max(lengths) + 1  # one padding column past the longest row
    embedded = torch.randn(len(lengths), steps, 5, dtype=torch.double, requires_grad=True)
    valid = torch.arange(steps)[None, :] < torch.tensor(lengths)[:, None]
    expected, expected_final = module_run(rnn, embedded, valid)
    states, final = run(rnn, embedded, valid)
    torch.testing.assert_close(states, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(flat(final), flat(expected_final), rtol=0, atol=1e-12)
    weights = torch.randn_like(expected), torch.randn_like(flat(expected_final))
    inputs = [embedded, *rnn.parameters()]
    want = torch.autograd.grad((expected * weights[0]).sum() + (flat(expected_final) * weights[1]).sum(), inputs)
    got = torch.autograd.grad((states * weights[0]).sum() + (flat(final) * weights[1]).sum(), inputs)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_states_final_states_and_gradients_equal_the_modules(mode, bidirectional):
    # unsorted lengths, a row of one token, ties, and a row with no real token (run as one, as packing does)
    compare(mode, bidirectional, 2, [3, 7, 1, 4, 7, 0])


@settings(max_examples=25, deadline=None)
@given(mode=st.sampled_from(["GRU", "LSTM"]), bidirectional=st.booleans(), layers=st.integers(1, 3),
       lengths=st.lists(st.integers(0, 9), min_size=1, max_size=7), seed=st.integers(0, 2**16))
def test_property_any_lengths_give_the_modules_states(mode, bidirectional, layers, lengths, seed):
    compare(mode, bidirectional, layers, lengths, seed=seed)


def test_dropout_between_layers_draws_as_the_module_does():
    # the module drops each layer's packed output but the last's; so does the stepped run, from the same generator
    rnn = nn.GRU(4, 8, 3, batch_first=True, bidirectional=True, dropout=0.5).double().train()
    embedded = torch.randn(5, 6, 4, dtype=torch.double)
    valid = torch.arange(6)[None, :] < torch.tensor([6, 2, 4, 1, 5])[:, None]
    torch.manual_seed(3)
    expected, _ = module_run(rnn, embedded, valid)
    torch.manual_seed(3)
    states, _ = stepped(rnn, embedded, valid)
    torch.testing.assert_close(states, expected, rtol=0, atol=1e-12)
    torch.manual_seed(4)
    assert not torch.allclose(stepped(rnn, embedded, valid)[0], expected)  # the draws do change the states


def test_run_packed_steps_on_the_cpu_and_lets_other_modules_run_themselves(monkeypatch):
    calls = []
    monkeypatch.setattr(sequence_encoders.stepped_rnn, "stepped", lambda *args: calls.append(args) or "stepped")
    gru = nn.GRU(3, 4, batch_first=True)
    embedded, valid = torch.randn(2, 3, 3), torch.ones(2, 3, dtype=torch.bool)
    assert run_packed(gru, embedded, valid) == "stepped" and len(calls) == 1
    plain_rnn = nn.RNN(3, 4, batch_first=True)  # an Elman network: the module runs it
    assert not supports(plain_rnn) and run_packed(plain_rnn, embedded, valid)[0].shape == (2, 3, 4)
    assert not supports(nn.LSTM(3, 4, batch_first=True, proj_size=2))
    monkeypatch.setattr(sequence_encoders, "STEPPED_ON_CPU", False)
    assert run_packed(gru, embedded, valid)[0].shape == (2, 3, 4) and len(calls) == 1


@pytest.mark.parametrize("layers,bias", [(1, True), (2, True), (3, False)])
def test_the_realigned_bidirectional_gru_gives_the_packed_modules_states_and_gradients(layers, bias):
    # what a CUDA device runs instead of packing; unsorted lengths, a full row, ties and a row with no real token
    compare("GRU", True, layers, [3, 7, 1, 4, 7, 0], run=run_realigned, bias=bias)


@settings(max_examples=25, deadline=None)
@given(layers=st.integers(1, 3), lengths=st.lists(st.integers(0, 9), min_size=1, max_size=7),
       seed=st.integers(0, 2**16))
def test_property_the_realigned_gru_gives_the_packed_modules_states_for_any_lengths(layers, lengths, seed):
    compare("GRU", True, layers, lengths, seed=seed, run=run_realigned)


def test_the_realigned_gru_drops_between_layers_only_in_training_and_runs_only_on_cuda(monkeypatch):
    rnn = nn.GRU(4, 8, 2, batch_first=True, bidirectional=True, dropout=0.5).double()
    embedded = torch.randn(5, 6, 4, dtype=torch.double)
    valid = torch.arange(6)[None, :] < torch.tensor([6, 2, 4, 1, 5])[:, None]
    expected, _ = module_run(rnn.eval(), embedded, valid)
    torch.testing.assert_close(run_realigned(rnn, embedded, valid)[0], expected, rtol=0, atol=1e-12)
    states, _ = run_realigned(rnn.train(), embedded, valid)
    assert not torch.allclose(states, expected)
    assert (states[~valid] == 0).all()  # padding stays zero, dropped or not
    assert realigned_supports(rnn) and not realigned_supports(nn.GRU(4, 8, batch_first=True))
    assert not realigned_supports(nn.LSTM(4, 8, batch_first=True, bidirectional=True))
    calls = []
    monkeypatch.setattr(sequence_encoders, "run_realigned", lambda *args: calls.append(args))
    monkeypatch.setattr(sequence_encoders, "STEPPED_ON_CPU", False)
    run_packed(rnn, embedded, valid)  # a CPU tensor: the module over the packed batch
    assert calls == []


def autograd_gru(rnn, embedded, valid):
    """One layer, one direction: each time step by autograd over the module's weights (what the stepped run did
    before its GRU had a backward of its own), on the rows of each step as ``stepped`` sorts them."""
    lengths = valid.sum(dim=1).clamp(min=1)
    order = torch.argsort(lengths, descending=True, stable=True)
    gates = torch.nn.functional.linear(embedded[order], rnn.weight_ih_l0, rnn.bias_ih_l0)  # (B, S, 3H)
    h = embedded.new_zeros(embedded.size(0), rnn.hidden_size)
    states = []
    for t in range(embedded.size(1)):
        rows = int((lengths > t).sum())
        hidden = torch.nn.functional.linear(h[:rows], rnn.weight_hh_l0, rnn.bias_hh_l0)
        input_r, input_z, input_n = gates[:rows, t].chunk(3, dim=1)
        hidden_r, hidden_z, hidden_n = hidden.chunk(3, dim=1)
        reset, update = torch.sigmoid(input_r + hidden_r), torch.sigmoid(input_z + hidden_z)
        candidate = torch.tanh(input_n + reset * hidden_n)
        h = torch.cat([candidate + update * (h[:rows] - candidate), h[rows:]])
        states.append(torch.cat([h[:rows], h.new_zeros(h.size(0) - rows, h.size(1))]))
    return torch.stack(states, dim=1)[torch.argsort(order)], h[torch.argsort(order)]


def test_under_bf16_autocast_the_gru_computes_what_autograd_over_its_steps_computes():
    # the forward is autocast's (products and gates in bf16, the state in float32); the backward's gradients are
    # the per-step autograd's up to bf16 rounding, where a wrong term of the written-out backward is far larger
    torch.manual_seed(0)
    rnn = nn.GRU(16, 32, batch_first=True)
    lengths = [9, 3, 9, 1, 6]
    embedded = torch.randn(len(lengths), 10, 16, requires_grad=True)
    valid = torch.arange(10)[None, :] < torch.tensor(lengths)[:, None]
    weights = torch.randn(len(lengths), 10, 32) * valid[..., None], torch.randn(len(lengths), 32)
    inputs = [embedded, *rnn.parameters()]
    runs = []
    for run in (stepped, autograd_gru):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            states, final = run(rnn, embedded, valid)
        assert states.dtype == final.dtype == torch.float32
        loss = (states * weights[0]).sum() + (final.reshape(len(lengths), 32) * weights[1]).sum()
        runs.append((states, final.reshape(len(lengths), 32), torch.autograd.grad(loss, inputs)))
    (states, final, grads), (want_states, want_final, want_grads) = runs
    torch.testing.assert_close(states, want_states, rtol=0, atol=0)
    torch.testing.assert_close(final, want_final, rtol=0, atol=0)
    for got, want in zip(grads, want_grads, strict=True):
        scale = want.abs().max()
        assert (got - want).abs().max() <= 0.02 * scale, ((got - want).abs().max(), scale)
