"""MkDocs hook: writes the config-key reference from the config classes at build time.

``docs/reference/config.md`` holds an introduction and the marker ``<!-- config-reference -->``; ``on_page_markdown``
replaces it with one table per section (``optim``, ``train``, ``decode``) and, for the two chosen sections (``data``
by ``data.task``, ``model`` by ``model.name``), one table per class of the family with the keys that class adds.
Each key shows its default, the values it allows (``ranged``, ``one_of`` and ``list_of`` fields) and what it means:
the comment on its line in the source, else the comment lines just above it.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path

MARKER = "<!-- config-reference -->"
PAGE = "reference/config.md"
FIELD = re.compile(r"^    ([a-z_][a-z0-9_]*): [^=#]+(?:=[^#]*)?(?:#\s*(.*))?$")


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE or MARKER not in markdown:
        return markdown
    root = Path(config.config_file_path).resolve().parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the checkout's package, also when it is not installed
    return markdown.replace(MARKER, config_reference())


def config_reference() -> str:
    from neuromath.config import DecodeConfig, OptimConfig, TrainConfig
    from neuromath.config.models import ModelConfig
    from neuromath.config.tasks import DataConfig

    parts = []
    for family, choice in ((DataConfig, "task"), (ModelConfig, "name")):
        section = family.section
        parts.append(f"## {section}\n\n`{section}.{choice}` chooses the class; a key of another class is an error "
                     f"that names the {section} values it belongs to.\n")
        parts.append(table(family, own_keys(family)))
        for klass in classes_of(family):
            names = [name for name, member in family.members.items() if member is klass]
            title = ", ".join(f"`{name}`" for name in names) if names else f"(shared by {subclasses(family, klass)})"
            parent = next(base for base in klass.__mro__[1:] if dataclasses.is_dataclass(base))
            keys = [item for item in own_keys(klass) if item.name != choice]  # the choosing key: in the root's table
            if not keys:
                continue
            parts.append(f"### {section}: {title}\n\n{first_line(klass)}" +
                         (f" Also {label(family, parent)}." if parent is not family else "") + "\n")
            parts.append(table(klass, keys))
    for klass in (OptimConfig, TrainConfig, DecodeConfig):
        parts.append(f"## {klass.section}\n\n{first_line(klass)}\n")
        parts.append(table(klass, own_keys(klass)))
    return "\n".join(parts)


def classes_of(family: type) -> list[type]:
    """Every class between the root and the members, parents first, in registration order."""
    seen: list[type] = []
    for member in family.members.values():
        for klass in reversed(member.__mro__):
            if klass is not family and issubclass(klass, family) and klass not in seen:
                seen.append(klass)
    return seen


def subclasses(family: type, klass: type) -> str:
    return ", ".join(f"`{name}`" for name, member in family.members.items() if issubclass(member, klass))


def label(family: type, klass: type) -> str:
    names = [name for name, member in family.members.items() if member is klass]
    if names:
        return "the keys of " + ", ".join(f"`{name}`" for name in names)
    return "the keys shared by " + subclasses(family, klass)


def first_line(klass: type) -> str:
    doc = inspect.getdoc(klass) or ""
    if doc.startswith(klass.__name__ + "("):  # the dataclass signature, not a docstring
        return ""
    return " ".join(doc.split("\n\n")[0].split())


def own_keys(klass: type) -> list[dataclasses.Field]:
    own = klass.__dict__.get("__annotations__", {})
    return [item for item in dataclasses.fields(klass) if item.name in own]


def comments(klass: type) -> dict[str, str]:
    """Key -> the comment on its line, else the comment lines directly above it."""
    found, above = {}, []
    for line in inspect.getsource(klass).splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("# "))
            continue
        match = FIELD.match(line)
        if match:
            found[match.group(1)] = (match.group(2) or " ".join(above)).strip()
        above = []
    return found


def table(klass: type, keys: list[dataclasses.Field]) -> str:
    notes = comments(klass)
    lines = ["| key | default | allowed | meaning |", "| --- | --- | --- | --- |"]
    for item in keys:
        lines.append(f"| `{item.name}` | {default_of(item)} | {allowed(item)} | {cell(notes.get(item.name, ''))} |")
    return "\n".join(lines) + "\n"


def default_of(item: dataclasses.Field) -> str:
    if item.default is not dataclasses.MISSING:
        value = item.default
    elif item.default_factory is not dataclasses.MISSING:
        value = item.default_factory()
    else:
        return ""
    text = "null" if value is None else str(value).lower() if isinstance(value, bool) else repr(value) \
        if isinstance(value, str) else str(value)
    return f"`{text.strip(chr(39))}`" if isinstance(value, str) else f"`{text}`"


def allowed(item: dataclasses.Field) -> str:
    choices = item.metadata.get("choices")
    if choices:
        return ", ".join(f"`{'null' if name is None else name}`" for name in dict.fromkeys(choices))
    items = item.metadata.get("items")
    if items:
        alone = "".join(f"`{name}` or " for name in item.metadata["alone"])
        return f"{alone}a comma list of " + ", ".join(f"`{name}`" for name in items)
    bounds = item.metadata.get("range")
    if bounds is not None:
        return cell(bounds.describe(floating="float" in str(item.type)))
    return ""


def cell(text: str) -> str:
    return text.replace("|", "\\|")
