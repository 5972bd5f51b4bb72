"""Graph2Tree's graph module: the normalised adjacency, one head per graph, each writing its own slice."""

import torch

from neuromath.nn.graph import GraphConvolutionModule, normalized_adjacency
from neuromath.nn.precision import autocast


def module(hidden=8, graphs=4, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return GraphConvolutionModule(hidden, d_ff=12, n_graphs=graphs, dropout=0.0).to(dtype).eval()


def inputs(rows=3, nodes=5, hidden=8, graphs=4, seed=1, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    states = torch.randn(rows, nodes, hidden, generator=generator, dtype=dtype)
    adjacency = (torch.rand(rows, graphs, nodes, nodes, generator=generator) < 0.4).to(dtype)
    return states, adjacency


def test_normalized_adjacency_adds_self_loops_and_makes_rows_sum_to_one():
    adjacency = torch.tensor([[[[0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]]])
    normalized = normalized_adjacency(adjacency)[0, 0]
    assert torch.allclose(normalized.sum(dim=-1), torch.ones(3))
    assert torch.allclose(normalized[0], torch.tensor([1 / 3, 1 / 3, 1 / 3]))
    assert torch.allclose(normalized[1], torch.tensor([0.0, 1.0, 0.0]))  # no link: only itself
    assert torch.allclose(normalized[2], torch.tensor([1 / 3, 1 / 3, 1 / 3]))  # a self link counts once


def test_each_head_reads_its_own_graph_and_writes_its_own_slice():
    """Changing graph k changes only what head k computes (before the residual and norms mix the slices)."""
    layer = module()
    states, adjacency = inputs()
    captured = []
    handle = layer.norm_graph.register_forward_pre_hook(lambda _, args: captured.append(args[0] - states))
    layer(states, adjacency)
    changed = adjacency.clone()
    changed[:, 2] = 1 - changed[:, 2]
    layer(states, changed)
    handle.remove()
    difference = (captured[0] - captured[1]).abs().amax(dim=(0, 1))  # (H,): per output column
    assert difference[4:6].min() > 1e-6  # head 2's slice (width 8 / 4 graphs = 2)
    assert difference[:4].max() == 0 and difference[6:].max() == 0


def test_under_bf16_autocast_the_module_stays_close_to_float32():
    layer = module(dtype=torch.float32)
    states, adjacency = inputs(dtype=torch.float32)
    with torch.no_grad():
        exact = layer(states, adjacency)
        with autocast("bf16-mixed"):
            reduced = layer(states, adjacency)
    assert reduced.dtype == torch.float32  # the residual stream stays float32
    torch.testing.assert_close(reduced, exact, rtol=0, atol=0.05)
