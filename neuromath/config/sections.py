"""The machinery of the config sections (``neuromath.config``): a ``Section`` checks itself whenever it is built, a
field declares the values it allows (``ranged``, ``one_of``), and a ``ChosenSection`` family (the model section,
chosen by ``model.name``; the data section, chosen by ``data.task``) builds the class that its choosing key names.

A family has one root class (``ModelConfig``, ``DataConfig``) holding the choosing key, and one class per member
(``TransformerConfig``, ``IdentitiesData``, ...) that declares exactly the keys its models or tasks read: a key that
does not belong to a model does not exist on its class. ``ModelConfig(name="tree_lstm", d_model=50)`` builds a
``TreeLSTMConfig``; a key of another member (``n_heads``) is a ConfigError that names the members it belongs to; an
unknown name is a ConfigError that lists the known ones. Adding a model or a task is one class and its
``@family.register(...)``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from dataclasses import field
from typing import Any, Callable, ClassVar

from neuromath.config.rules import Range, format_number
from neuromath.errors import ConfigError

Rule = Callable[[Any], "tuple[str, str] | None"]  # a section -> None, or the dotted key at fault and what is wrong


def ranged(default: Any, allowed: Range) -> Any:
    """A field whose numeric value (each item, for a tuple) must be in ``allowed``."""
    return field(default=default, metadata={"range": allowed})


def one_of(default: str, *names: str) -> Any:
    """A field whose value must be one of ``names``."""
    assert default in names
    return field(default=default, metadata={"choices": names})


def list_of(default: str, *names: str, alone: tuple[str, ...] = ()) -> Any:
    """A comma list field: one or more of ``names``, each once; a value in ``alone`` (``auto``) stands by itself."""
    return field(default=default, metadata={"items": names, "alone": alone})


def list_problem(value: str, names: tuple[str, ...], alone: tuple[str, ...]) -> str | None:
    """Why ``value`` is not a comma list of ``names`` (or one of ``alone``), or None."""
    if value in alone:
        return None
    items = [item.strip() for item in value.split(",")]
    wrong = [item for item in items if item not in names]
    if not value.strip() or wrong or len(set(items)) < len(items):
        either = f"{' or '.join(alone)} or " if alone else ""
        return f"must be {either}a comma list of {', '.join(names)} (each once)"
    return None


def unknown_keys_message(unknown: list[str], known: Any, prefix: str, values: Any = None) -> str:
    """What a ConfigError says of keys no class of a section has: ``unknown key in train: max_epoch; did you mean
    train.max_epochs?`` (``difflib``'s closest known key), with the known keys listed when a key has no close one.
    At the top (``prefix`` empty) the keys are sections: a mistyped section holding one key is suggested with it
    (``trian: {max_epochs: 1}``: ``did you mean train.max_epochs?``)."""
    names = sorted(str(name) for name in known)
    suggestions = []
    for name in unknown:
        close = difflib.get_close_matches(name, names, n=1)
        if not close:
            continue
        inner = values.get(name) if isinstance(values, dict) else None
        if not prefix and isinstance(inner, dict) and len(inner) == 1:
            close = [f"{close[0]}.{next(iter(inner))}"]
        suggestions.append(f"{prefix}.{close[0]}" if prefix else close[0])
    where = f" in {prefix}" if prefix else ""
    message = f"unknown key{'s' if len(unknown) > 1 else ''}{where}: {', '.join(unknown)}"
    if suggestions:
        message += f"; did you mean {', '.join(suggestions)}?"
    if len(suggestions) < len(unknown):
        message += f"; known: {', '.join(names)}"
    return message


def config_error(message: str, key: str) -> ConfigError:
    """A ConfigError that also says which dotted key it is about (``load_config`` names the ``--set`` that gave it)."""
    error = ConfigError(message)
    error.key = key
    return error


class Section:
    """Base of the config sections: whenever one is built (from a file, ``--set``, a run folder or Python,
    ``dataclasses.replace`` included) each key is checked against its type and the values its field allows, and the
    keys against each other (the class's ``rules``), so a bad value is a ConfigError naming the key and what it
    allows before anything runs."""

    section: ClassVar[str]
    rules: ClassVar[tuple[Rule, ...]] = ()

    def __post_init__(self) -> None:
        check_section(self)

    def option(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` where this section's class has it, else ``default``: for code that serves several
        tasks or models and reads a key that only some of their classes have (``data.candidates``)."""
        return getattr(self, key) if key in self.__dataclass_fields__ else default


class ChosenSection(Section):
    """A section whose class is chosen by one of its keys (``choice``: ``name`` or ``task``). The family's root class
    holds the registry; ``Root(**values)`` builds the member class that ``values[choice]`` (or the root's default)
    names. A member class built directly must be given one of its own names."""

    choice: ClassVar[str]
    kind_of_name: ClassVar[str]  # "model", "task": how messages call a value of the choosing key
    members: ClassVar[dict[str, type]]  # on the root: value of the choosing key -> member class (registration order)
    names: ClassVar[tuple[str, ...]] = ()  # on a member: the values of the choosing key it configures

    def __new__(cls, *args: Any, **kwargs: Any):
        if "members" not in cls.__dict__:  # a member class (dataclasses.replace, pickle): built as itself
            return object.__new__(cls)
        if args:
            raise TypeError(f"{cls.__name__}(...) takes keywords only")
        member = cls.member(kwargs.get(cls.choice, cls.default_choice()))
        for key in kwargs:
            if key not in member.keys():
                raise config_error(cls.not_a_key_of(key, member, kwargs.get(cls.choice, cls.default_choice())),
                                   f"{cls.section}.{key}")
        return object.__new__(member)

    def __post_init__(self) -> None:
        value = getattr(self, self.choice)
        if value not in self.names:
            raise config_error(
                f"{self.section}.{self.choice}: {value!r} is not configured by {type(self).__name__} (it configures "
                f"{', '.join(self.names)}); build {self.family_root().__name__}({self.choice}={value!r}, ...) instead",
                f"{self.section}.{self.choice}")
        super().__post_init__()

    # ------------------------------------------------------------------ the family (called on its root or a member)

    @classmethod
    def family_root(cls) -> type:
        return next(klass for klass in cls.__mro__ if "members" in klass.__dict__)

    @classmethod
    def register(cls, *names: str) -> Callable[[type], type]:
        """Class decorator: the member class configures ``names`` (its own default of the choosing key must be
        the first)."""

        def decorate(member: type) -> type:
            root = cls.family_root()
            default = member.__dataclass_fields__[root.choice].default
            if default != names[0]:
                raise TypeError(f"{member.__name__}.{root.choice} must default to {names[0]!r}, not {default!r}")
            for name in names:
                if name in root.members:
                    raise TypeError(f"{root.kind_of_name} {name!r} is configured by {root.members[name].__name__} "
                                    f"already")
                root.members[name] = member
            member.names = tuple(names)
            return member

        return decorate

    @classmethod
    def default_choice(cls) -> str:
        return cls.family_root().__dataclass_fields__[cls.family_root().choice].default

    @classmethod
    def known(cls) -> tuple[str, ...]:
        """Every value of the choosing key, in registration order."""
        return tuple(cls.family_root().members)

    @classmethod
    def member(cls, value: Any) -> type:
        """The member class that configures ``value``; an unknown one is a ConfigError listing the known ones."""
        root = cls.family_root()
        members = root.members
        if not isinstance(value, str) or value not in members:
            key = f"{root.section}.{root.choice}"
            raise config_error(f"{key}: unknown {root.kind_of_name} {value!r}; the {root.kind_of_name}s are: "
                               f"{', '.join(members)}", key)
        return members[value]

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The keys of this class (of every member, on the root), in declaration order."""
        classes = cls.family_root().members.values() if "members" in cls.__dict__ else [cls]
        return tuple(dict.fromkeys(item.name for klass in classes for item in dataclasses.fields(klass)))

    @classmethod
    def names_with(cls, key: str) -> tuple[str, ...]:
        """The values of the choosing key whose class has ``key``."""
        return tuple(name for name, member in cls.family_root().members.items() if key in member.__dataclass_fields__)

    @classmethod
    def not_a_key_of(cls, key: str, member: type, value: str) -> str:
        """What a message says about ``key`` given for ``value``, whose class ``member`` does not have it."""
        root = cls.family_root()
        owners = root.names_with(key)
        if not owners:
            return unknown_keys_message([key], root.keys(), root.section)
        return (f"{root.section}.{key} does not apply to the {value} {root.kind_of_name} (it applies to: "
                f"{', '.join(owners)})")


def check_section(values: Section) -> None:
    """Raise a ConfigError (with ``.key``, the dotted key at fault) for the first key of a config section of the
    wrong type, outside its range, not one of its choices, or breaking one of the class's ``rules``."""
    hints = section_types(type(values))
    for item in dataclasses.fields(values):
        key = f"{values.section}.{item.name}"
        value = getattr(values, item.name)
        try:
            check_value(value, hints[item.name], key)
        except ConfigError as error:
            raise config_error(str(error), key) from None
        choices = item.metadata.get("choices")
        if choices is not None and value not in choices:
            shown = ", ".join("null" if choice is None else choice for choice in choices)
            raise config_error(f"{key} must be one of {shown}, got {value!r}", key)
        problem = list_problem(value, item.metadata["items"], item.metadata["alone"]) if "items" in item.metadata \
            else None
        if problem is not None:
            raise config_error(f"{key} {problem}, got {value!r}", key)
        allowed = item.metadata.get("range")
        if allowed is None:
            continue
        for index, number in enumerate(value) if isinstance(value, tuple) else [(None, value)]:
            where = key if index is None else f"{key}[{index}]"
            if number not in allowed:
                floating = isinstance(number, float) or hints[item.name] is float
                raise config_error(f"{where} must be {allowed.describe(floating)}, got {format_number(number)}", key)
    for rule in type(values).rules:
        problem = rule(values)
        if problem is not None:
            key, message = problem
            raise config_error(message, key)


@functools.cache
def section_types(cls: type) -> dict[str, Any]:
    """The field types of a config section class (``typing.get_type_hints``, read once per class)."""
    return typing.get_type_hints(cls)


def check_value(value: Any, annotation: Any, key: str) -> Any:
    """Return ``value`` converted to ``annotation`` or raise a ConfigError naming ``key``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return check_value(value, option, key)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if errors else f"{key}: bad value {value!r}")
    if origin is tuple:
        item_types = typing.get_args(annotation)
        if not isinstance(value, (list, tuple)) or len(value) != len(item_types):
            raise ConfigError(f"{key}: expected a list of {len(item_types)} values, got {value!r}")
        return tuple(check_value(v, t, f"{key}[{i}]") for i, (v, t) in enumerate(zip(value, item_types)))
    if dataclasses.is_dataclass(annotation):
        return build_section(annotation, value, key)
    if annotation is bool:
        if isinstance(value, bool):
            return value
    elif annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif annotation is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:  # an integer with hundreds of digits
                raise ConfigError(f"{key}: an integer of {len(str(value))} digits is too large for a float") from None
    elif annotation is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - a field type this loader does not know is a programming error
        raise TypeError(f"unsupported config type {annotation!r} for {key}")
    raise ConfigError(f"{key}: expected {annotation.__name__}, got {value!r} ({type(value).__name__})")


def build_section(cls: type, values: Any, prefix: str) -> Any:
    """Build ``cls`` (a section, or the whole config) from a mapping read from YAML, checking each value's type.

    A family root builds the member its choosing key names, and leaves out the keys that belong to other members
    (a run folder written by an earlier version may hold them; ``load_config(strict=True)`` refuses them in what a
    user writes). A key no class of the section has is an error that lists the known keys."""
    if not isinstance(values, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {values!r}")
    if isinstance(cls, type) and issubclass(cls, ChosenSection) and "members" in cls.__dict__:
        member = cls.member(values.get(cls.choice, cls.default_choice()))
        known = set(cls.keys())
        unknown = sorted(str(name) for name in set(values) - known)
        values = {name: value for name, value in values.items() if name in member.__dataclass_fields__
                  or name in unknown}
        cls = member
    else:
        known = {item.name for item in dataclasses.fields(cls)}
        unknown = sorted(str(name) for name in set(values) - known)  # YAML keys may be numbers, null, ...
    if unknown:
        raise ConfigError(unknown_keys_message(unknown, known, prefix, values))
    hints = section_types(cls)
    kwargs = {}
    for name, value in values.items():
        key = f"{prefix}.{name}" if prefix else name
        try:
            kwargs[name] = check_value(value, hints[name], key)
        except ConfigError as error:
            if getattr(error, "key", None) is None:  # the innermost key at fault, for load_config to name its --set
                error.key = key
            raise
    return cls(**kwargs)


def family(section: str, choice: str, kind_of_name: str) -> Callable[[type], type]:
    """Class decorator for a family root: its section name, choosing key and an empty registry."""

    def decorate(root: type) -> type:
        root.section, root.choice, root.kind_of_name = section, choice, kind_of_name
        root.members = {}
        return root

    return decorate


