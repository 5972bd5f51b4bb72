"""Do the TP-Transformer's role vectors track structure? The analysis behind ``neuromath analyze roles``, after the
role analysis of Schlag et al. 2019 (Sec. 5): the role (relation) vectors r = W_r z + b_r (eq. 3) that one head of
one layer binds to its retrieved values, one per token occurrence, are clustered with k-means and the clusters
compared with the tokens' classes (``token_class``: digit, letter, operator, bracket, space, punctuation, number,
special).

Measures, per head:

- purity: the share of vectors whose cluster's most frequent class is their own class;
- NMI: the normalised mutual information between clusters and classes (0: independent, 1: the same partition);
- the same two with the classes shuffled among the vectors (``shuffles`` seeded permutations, mean and standard
  deviation): the clusters stay, only their link to the tokens is broken. Purity is high by chance alone when one
  class dominates (spaces and digits in arithmetic questions), so only the distance to the shuffled value says
  anything; NMI of shuffled classes is near 0.

The input is plain arrays (``RoleSample``); collecting them from a model is ``neuromath.experiments.analyses``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from neuromath.extras import require
from neuromath.fileio import save_figure, write_text_atomic

TOKEN_CLASSES = ("digit", "letter", "operator", "bracket", "space", "punctuation", "number", "special")
OPERATORS = set("+-*/=^<>×÷") | {"neg", "**"}
BRACKETS = set("()[]{}")
NUMBER_SLOT = re.compile(r"n\d+")  # a masked number of a word problem


def token_class(token: str) -> str:
    """The class of a token: one of TOKEN_CLASSES (a character of the Mathematics Dataset or a word)."""
    if token.startswith("<") and token.endswith(">") and len(token) > 2:
        return "special"  # <bos>, <eos>, <unk>
    if token.isspace():
        return "space"
    if token in OPERATORS:
        return "operator"
    if token in BRACKETS:
        return "bracket"
    if NUMBER_SLOT.fullmatch(token):
        return "number"
    if token.isdigit() or re.fullmatch(r"\d+(\.\d+)?", token):
        return "digit"
    if token.isalpha():
        return "letter"
    return "punctuation"


@dataclass
class RoleSample:
    """The role vectors of one head of one layer over the data, one per token occurrence."""

    layer: str  # the layer's title (``encoder self-attention, layer 2``)
    head: int  # 0-based
    vectors: np.ndarray  # (N, head_dim)
    tokens: list[str] = field(default_factory=list)  # the token each vector belongs to (the query's token)


@dataclass
class HeadAnalysis:
    layer: str
    head: int
    n: int
    k: int
    purity: float
    nmi: float
    shuffled_purity: tuple[float, float]  # mean, standard deviation over the shuffles
    shuffled_nmi: tuple[float, float]
    clusters: list[dict]  # per cluster: size, most frequent tokens and classes, its majority class and share
    labels: np.ndarray  # (N,) the cluster of each vector
    classes: list[str]  # the class of each vector

    @property
    def gain(self) -> float:
        """Purity above the shuffled baseline's mean."""
        return self.purity - self.shuffled_purity[0]

    def summary(self) -> dict:
        return {"layer": self.layer, "head": self.head + 1, "vectors": self.n, "k": self.k,
                "purity": self.purity, "shuffled_purity": list(self.shuffled_purity), "nmi": self.nmi,
                "shuffled_nmi": list(self.shuffled_nmi), "purity_gain": self.gain}


def purity(labels: np.ndarray, classes: np.ndarray) -> float:
    """The share of items whose cluster's most frequent class is their class (``labels``, ``classes``: int arrays)."""
    if len(labels) == 0:
        return 0.0
    table = np.zeros((labels.max() + 1, classes.max() + 1), dtype=np.int64)
    np.add.at(table, (labels, classes), 1)
    return float(table.max(axis=1).sum() / len(labels))


def analyse_head(sample: RoleSample, k: int, seed: int = 0, shuffles: int = 20) -> HeadAnalysis:
    """k-means (k clusters, at most the number of distinct vectors) of one head's roles against the token classes."""
    require("sklearn", "the k-means of the role vectors (neuromath analyze roles)")
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    vectors = np.asarray(sample.vectors, dtype=np.float64)
    if len(vectors) < 2:
        raise ValueError(f"{sample.layer} head {sample.head + 1}: {len(vectors)} role vectors; need at least 2")
    k = max(1, min(k, len(np.unique(vectors, axis=0))))
    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(vectors)
    classes = [token_class(token) for token in sample.tokens]
    class_ids = np.array([TOKEN_CLASSES.index(c) for c in classes])
    rng = np.random.default_rng(seed)
    shuffled = [rng.permutation(class_ids) for _ in range(shuffles)]
    shuffled_purity = [purity(labels, s) for s in shuffled]
    shuffled_nmi = [normalized_mutual_info_score(s, labels) for s in shuffled]
    return HeadAnalysis(
        layer=sample.layer, head=sample.head, n=len(vectors), k=k,
        purity=purity(labels, class_ids), nmi=float(normalized_mutual_info_score(class_ids, labels)),
        shuffled_purity=(float(np.mean(shuffled_purity)), float(np.std(shuffled_purity))),
        shuffled_nmi=(float(np.mean(shuffled_nmi)), float(np.std(shuffled_nmi))),
        clusters=describe_clusters(labels, sample.tokens, classes), labels=labels, classes=classes,
    )


def describe_clusters(labels: np.ndarray, tokens: Sequence[str], classes: Sequence[str], top: int = 6) -> list[dict]:
    """Per cluster, largest first: its size, most frequent tokens and classes, and its majority class's share."""
    clusters = []
    for cluster in np.unique(labels):
        members = np.flatnonzero(labels == cluster)
        token_counts = Counter(tokens[i] for i in members)
        class_counts = Counter(classes[i] for i in members)
        majority, count = class_counts.most_common(1)[0]
        clusters.append({"cluster": int(cluster), "size": len(members), "majority_class": majority,
                         "majority_share": count / len(members),
                         "tokens": token_counts.most_common(top), "classes": class_counts.most_common()})
    return sorted(clusters, key=lambda c: -c["size"])


def analyse_roles(samples: Sequence[RoleSample], k: int, seed: int = 0, shuffles: int = 20) -> list[HeadAnalysis]:
    return [analyse_head(sample, k, seed, shuffles) for sample in samples]


# ------------------------------------------------------------------------------------------------ the report


def shown(token: str) -> str:
    return repr(token) if token.isspace() or not token else token


def to_markdown(analyses: Sequence[HeadAnalysis], best: HeadAnalysis, meta: dict, why: str) -> str:
    lines = [f"# Role analysis of {meta['run']}", "",
             f"Data: {meta['data']} ({meta['examples']} examples, teacher-forced on the gold answers). "
             f"k-means with k = {meta['k']} on the role vectors of each head of each TP-Attention layer; the token "
             f"classes shuffled {meta['shuffles']} times among the vectors give the chance level (mean ± std). "
             "Purity counts the vectors whose cluster's most frequent class is their own; NMI is the normalised "
             "mutual information of clusters and classes.", "",
             "In the first layer a role is a function of the token and its position alone, so classes there say mostly "
             "that the embedding separates them; deeper layers show what the roles add.", "",
             "| row | layer | head | vectors | purity | shuffled purity | NMI | shuffled NMI |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row, a in enumerate(analyses, start=1):
        lines.append(f"| {row} | {a.layer} | {a.head + 1} | {a.n} | {100 * a.purity:.1f} | "
                     f"{100 * a.shuffled_purity[0]:.1f} ± {100 * a.shuffled_purity[1]:.1f} | {a.nmi:.3f} | "
                     f"{a.shuffled_nmi[0]:.3f} ± {a.shuffled_nmi[1]:.3f} |")
    lines += ["", f"## Clusters of {best.layer}, head {best.head + 1} ({why})", "",
              f"Purity {100 * best.purity:.1f}% against {100 * best.shuffled_purity[0]:.1f}% with shuffled "
              f"classes; NMI {best.nmi:.3f} against {best.shuffled_nmi[0]:.3f}. The PCA plot is {meta['plot']}.", "",
              "| cluster | size | majority class (share) | classes | most frequent tokens |",
              "| ---: | ---: | --- | --- | --- |"]
    for c in best.clusters:
        classes = ", ".join(f"{name} {count}" for name, count in c["classes"])
        tokens = ", ".join(f"{shown(token)} ({count})" for token, count in c["tokens"])
        lines.append(f"| {c['cluster']} | {c['size']} | {c['majority_class']} ({100 * c['majority_share']:.0f}%) | "
                     f"{classes} | {tokens} |")
    return "\n".join(lines) + "\n"


def plot_pca(analysis: HeadAnalysis, vectors: np.ndarray, path: str | Path, seed: int = 0) -> None:
    """Two panels of the head's roles projected on their first two principal components: coloured by token class,
    and by the same classes shuffled among the points (the chance picture)."""
    require("matplotlib", "the PCA plot of role vectors")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    require("sklearn", "the PCA plot of the role vectors (neuromath analyze roles)")
    from sklearn.decomposition import PCA

    points = PCA(n_components=2, random_state=seed).fit_transform(np.asarray(vectors, dtype=np.float64))
    shuffled = np.random.default_rng(seed).permutation(np.array(analysis.classes))
    figure = Figure(figsize=(12, 5.2), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, 2)
    for panel, classes, what in ((panels[0], np.array(analysis.classes), "token classes"),
                                 (panels[1], shuffled, "classes shuffled among the points")):
        for index, name in enumerate(TOKEN_CLASSES):
            chosen = classes == name
            if chosen.any():
                panel.scatter(points[chosen, 0], points[chosen, 1], s=4, alpha=0.5, color=f"C{index}",
                              label=f"{name} ({int(chosen.sum())})")
        panel.set_title(f"{analysis.layer}, head {analysis.head + 1}: {what}", fontsize=9)
        panel.set_xlabel("PC 1")
        panel.set_ylabel("PC 2")
        panel.legend(fontsize=7, markerscale=3)
    save_figure(figure, path, dpi=110)


def write_report(analyses: Sequence[HeadAnalysis], samples: Sequence[RoleSample], meta: dict,
                 out_dir: str | Path, row: int | None = None) -> dict[str, Path]:
    """``report.md``, ``report.json`` and ``roles_pca.png`` in ``out_dir``; the clusters and the plot are of the head
    in table row ``row`` (1-based), by default the head with the largest NMI."""
    out_dir = Path(out_dir)
    if row is not None and not 1 <= row <= len(analyses):
        raise ValueError(f"there are {len(analyses)} heads (rows 1 to {len(analyses)}), not row {row}")
    best_index = row - 1 if row is not None else max(range(len(analyses)), key=lambda i: analyses[i].nmi)
    why = f"row {row}" if row is not None else "the largest NMI"
    best = analyses[best_index]
    paths = {"markdown": out_dir / "report.md", "json": out_dir / "report.json", "plot": out_dir / "roles_pca.png"}
    meta = {**meta, "plot": paths["plot"].name}
    plot_pca(best, samples[best_index].vectors, paths["plot"], seed=meta.get("seed", 0))
    report = {**meta, "heads": [a.summary() for a in analyses],
              "detailed": {"row": best_index + 1, **best.summary(), "clusters": best.clusters}}
    write_text_atomic(paths["json"], json.dumps(report, indent=2, ensure_ascii=False))
    write_text_atomic(paths["markdown"], to_markdown(analyses, best, meta, why))
    return paths
