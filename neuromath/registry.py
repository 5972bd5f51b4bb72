"""One Registry class for the building blocks and procedures chosen by name: tasks, attention kernels, positions,
tree cells, sequence encoders, training and evaluation procedures. Models are registered with their config class
(``neuromath.config.models``)."""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from neuromath.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A name -> object table with a clear error for unknown names.

    Use as a decorator (``@ATTENTION.register("tp")``) or call ``add`` directly.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorate(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorate

    def add(self, name: str, obj: T) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = obj

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


ATTENTION: Registry = Registry("attention kernel")
POSITIONS: Registry = Registry("positional encoding")
TASKS: Registry = Registry("task")
TREE_CELLS: Registry = Registry("tree cell")  # recursive cells run by the level-batched tree engine
SEQUENCE_ENCODERS: Registry = Registry("sequence encoder")  # RNN baselines over pre-order token sequences
TRAINING: Registry = Registry("training procedure")  # how runs train and are tested, by the model's kind
# how `evaluate` scores and reports a task's runs (task.evaluation)
EVALUATION: Registry = Registry("evaluation procedure")
# how `compare` scores each example of a task's runs right or wrong, by the same name as its evaluation procedure
PAIRED_SCORING: Registry = Registry("per-example scoring")
