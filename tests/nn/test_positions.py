import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.nn.positions import LearnedPositions
from neuromath.registry import POSITIONS


def test_learned_positions_are_registered_and_built_from_the_config():
    positions = POSITIONS.get("learned").build(ModelConfig(d_model=8, max_len=10))
    assert isinstance(positions, LearnedPositions) and not LearnedPositions.needs_tree
    assert positions.position_embedding.weight.shape == (10, 8)
    # the model's generic initialisation recognises the table by "embedding" in its name
    assert [name for name, _ in positions.named_parameters()] == ["position_embedding.weight"]


def test_learned_positions_add_the_rows_from_start_on():
    positions = LearnedPositions(d_model=4, max_len=10)
    table = positions.position_embedding.weight.detach()
    embeddings = torch.arange(2 * 3 * 4, dtype=torch.float32).view(2, 3, 4)
    out = positions(embeddings, start=5)
    for b in range(2):
        for t in range(3):
            torch.testing.assert_close(out[b, t], embeddings[b, t] + table[5 + t])


def test_learned_positions_with_a_start_offset_agree_with_the_whole_sequence():
    positions = LearnedPositions(d_model=4, max_len=10)
    embeddings = torch.randn(2, 6, 4)
    whole = positions(embeddings)
    torch.testing.assert_close(positions(embeddings[:, 4:], start=4), whole[:, 4:])
    torch.testing.assert_close(positions(embeddings[:, 4:5], start=4), whole[:, 4:5])


def test_only_the_used_rows_receive_gradient():
    positions = LearnedPositions(d_model=4, max_len=10)
    positions(torch.zeros(2, 3, 4), start=6).sum().backward()
    used = torch.zeros(10, dtype=torch.bool)
    used[6:9] = True
    gradient = positions.position_embedding.weight.grad
    torch.testing.assert_close(gradient[used], torch.full((3, 4), 2.0))  # batch of 2
    assert torch.all(gradient[~used] == 0)


def test_learned_positions_beyond_max_len_are_an_error():
    positions = LearnedPositions(d_model=4, max_len=10)
    assert positions(torch.zeros(1, 3, 4), start=7).shape == (1, 3, 4)  # exactly up to max_len is fine
    with pytest.raises(ValueError, match="longer than max_len"):
        positions(torch.zeros(1, 3, 4), start=8)
    with pytest.raises(ValueError, match="longer than max_len"):
        positions(torch.zeros(1, 11, 4))
