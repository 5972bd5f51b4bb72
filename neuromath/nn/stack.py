"""Differentiable soft stack: Joulin & Mikolov 2015 (section 3.1) and Mali et al. 2021 (eqs. 16-19),
the push / pop / no-op stack update.

A stack is a tensor (n, depth, width): ``stack[:, 0]`` is the top, ``stack[:, depth - 1]`` the bottom.
A controller gives per row probabilities of push, pop and no-op (summing to 1) and a vector to push; the new
stack mixes the three outcomes:

    new[0] = push * pushed   + pop * stack[1]   + noop * stack[0]
    new[i] = push * stack[i-1] + pop * stack[i+1] + noop * stack[i]      (0 < i < depth)

with ``stack[depth] = 0`` (a pop pulls up zeros; a push drops the bottom element). One-hot actions give an
ordinary bounded stack; soft ones stay differentiable in actions, pushed vector and old stack.

``StackController``, shared by the stack RNN and the stack tree cells, maps h to softmax(A h + a) and pushed
sigmoid(D h + d), as in Joulin & Mikolov.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.errors import ConfigError


def empty_stack(n: int, depth: int, width: int, like: torch.Tensor) -> torch.Tensor:
    """A batch of n empty (all zero) stacks (n, depth, width), with the dtype and device of ``like``."""
    return like.new_zeros(n, depth, width)


def stack_top(stack: torch.Tensor) -> torch.Tensor:
    """The top element of every stack: (n, depth, width) -> (n, width)."""
    return stack[:, 0]


def soft_stack_update(
    stack: torch.Tensor, push: torch.Tensor, pop: torch.Tensor, noop: torch.Tensor, pushed: torch.Tensor
) -> torch.Tensor:
    """One soft stack step.

    stack (n, depth, width); push, pop, noop summing to 1, (n, 1) per row or (n, width) per coordinate (Tree-SMU,
    Arabshahi et al. 2019); pushed (n, width). Returns the new stack (n, depth, width).
    """
    if stack.dim() != 3:
        raise ValueError(f"stack must have shape (n, depth, width), got {tuple(stack.shape)}")
    n, depth, width = stack.shape
    for name, action in (("push", push), ("pop", pop), ("noop", noop)):
        if action.shape not in ((n, 1), (n, width)):
            raise ValueError(f"{name} must have shape ({n}, 1) or ({n}, {width}), got {tuple(action.shape)}")
    if pushed.shape != (n, width):
        raise ValueError(f"pushed must have shape ({n}, {width}), got {tuple(pushed.shape)}")
    after_push = torch.cat([pushed.unsqueeze(1), stack[:, :-1]], dim=1)  # (n, depth, width)
    below_bottom = stack.new_zeros(n, 1, width)
    after_pop = torch.cat([stack[:, 1:], below_bottom], dim=1)  # (n, depth, width)
    push = push.unsqueeze(1)  # (n, 1, 1) or (n, 1, width): the same mixture at every depth
    pop = pop.unsqueeze(1)
    noop = noop.unsqueeze(1)
    return push * after_push + pop * after_pop + noop * stack


class StackController(nn.Module):
    """From a hidden state (n, hidden) to soft stack actions and the pushed vector (Joulin & Mikolov 2015).

    ``forward(h)`` returns (push, pop, noop, pushed): three (n, 1) probabilities from
    softmax(A h + a) and pushed = sigmoid(D h + d) of shape (n, width).
    """

    def __init__(self, hidden_size: int, width: int):
        super().__init__()
        if hidden_size < 1 or width < 1:
            raise ConfigError(f"stack controller sizes must be positive, got hidden {hidden_size}, width {width}")
        self.action = nn.Linear(hidden_size, 3)
        self.push_value = nn.Linear(hidden_size, width)

    def forward(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        actions = torch.softmax(self.action(hidden), dim=-1)  # (n, 3)
        push, pop, noop = actions.split(1, dim=-1)
        pushed = torch.sigmoid(self.push_value(hidden))  # (n, width)
        return push, pop, noop, pushed

    def step(self, stack: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """The new stack after the actions ``hidden`` chooses: (n, depth, width)."""
        push, pop, noop, pushed = self(hidden)
        return soft_stack_update(stack, push, pop, noop, pushed)
