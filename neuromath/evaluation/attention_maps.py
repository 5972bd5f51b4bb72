"""Attention maps of one solved problem as a PNG: one row of panels per attention layer (encoder self-attention,
decoder self-attention, cross-attention, group attention, ...), one panel per head, tokens on the axes (rows: the
queries, columns: the keys), weights from 0 (white) to 1 (dark).

``maps`` are ``neuromath.api.AttentionMap``s (anything with ``title``, ``head_labels``, ``query_tokens``,
``key_tokens`` and ``weights`` (heads, queries, keys)).

Every text drawn (the title, the panel titles, the tokens) goes through ``neuromath.fileio.figure_text``, so any text
a user types (a byte that was not UTF-8, a ``$`` that matplotlib would read as mathtext, control characters) is drawn
as it is, never an error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from neuromath.extras import require
from neuromath.fileio import figure_text, save_figure

MAX_PIXELS = 40_000_000  # a figure larger than this is drawn at a lower resolution
LABELLED_TOKENS = 80  # axes with more tokens than this show every k-th label only


def panel_inches(tokens: int) -> float:
    return min(8.0, max(2.2, 0.16 * tokens))


def plot_attention(maps: Sequence, path: str | Path, title: str = "") -> Path:
    """Draw ``maps`` into ``path`` (PNG, written to a temporary name and renamed); returns the path. Uses matplotlib's
    object API with the Agg canvas: no display, no global pyplot state (safe from a server's threads)."""
    require("matplotlib", "drawing attention maps")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not maps:
        raise ValueError("no attention maps to draw")
    columns = max(len(m.head_labels) for m in maps)
    width = columns * max(panel_inches(len(m.key_tokens)) for m in maps) + 1.5
    heights = [panel_inches(len(m.query_tokens)) + 0.8 for m in maps]
    height = sum(heights) + (0.6 if title else 0.2)
    dpi = max(30, min(100, int(math.sqrt(MAX_PIXELS / (width * height)))))
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(maps), columns, squeeze=False, gridspec_kw={"height_ratios": heights})
    image = None
    for row, attention_map in enumerate(maps):
        for column in range(columns):
            panel = axes[row][column]
            if column >= len(attention_map.head_labels):
                panel.axis("off")
                continue
            image = panel.imshow(attention_map.weights[column], cmap="Blues", vmin=0.0, vmax=1.0,
                                 aspect="auto", interpolation="nearest")
            label_axis(panel.set_xticks, panel.set_xticklabels, attention_map.key_tokens, rotation=90)
            label_axis(panel.set_yticks, panel.set_yticklabels, attention_map.query_tokens)
            panel.set_title(f"{figure_text(attention_map.title)}\n{figure_text(attention_map.head_labels[column])}",
                            fontsize=8)
    figure.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    if title:
        figure.suptitle(figure_text(title), fontsize=10)
    save_figure(figure, path, dpi=dpi)
    return Path(path)


def label_axis(set_ticks, set_labels, tokens: Sequence[str], rotation: int = 0) -> None:
    step = max(1, math.ceil(len(tokens) / LABELLED_TOKENS))
    positions = list(range(0, len(tokens), step))
    set_ticks(positions)
    set_labels([shown(tokens[p]) for p in positions], fontsize=6, rotation=rotation)


def shown(token: str) -> str:
    """A token as an axis label: a space is drawn as a visible mark (the Mathematics Dataset's characters); any other
    text as ``figure_text`` makes it drawable, at most 40 characters."""
    return "␣" if token == " " else figure_text(token, limit=40)
