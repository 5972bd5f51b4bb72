"""The catalogue of public corpora that ``neuromath data get`` fetches: for each, its folder under the data root (the
name presets and ``dataroot.CORPORA`` use), source, licence and size, and its files, each with the upstream URL, the
sha256 of the upstream bytes and its path under the data root.

A sha256 is recorded only for bytes someone has checked (the files the project's tests read); a file without one
(``sha256=None``) is fetched only on request (``--unpinned``), and the command prints the sha256 it received so that
it can be recorded here. Upstream paths and local paths differ: ``data/cv_mawps/fold0/train.csv`` of the SVAMP
repository is ``mawps-cv/fold0/train.csv`` under the root. Each repository's licence travels with its corpus.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import PurePosixPath

from neuromath.errors import DownloadError

SVAMP = "https://raw.githubusercontent.com/arkilpatel/SVAMP/main/"
MWPTOOLKIT = "https://raw.githubusercontent.com/LYH-YF/MWPToolkit/master/"
TREE_SMU = "https://raw.githubusercontent.com/ForoughA/recursiveMemNet/master/"
SYMBOLIC = "https://dl.fbaipublicfiles.com/SymbolicMathematics/data/"
SYMBOLIC_REPO = "https://raw.githubusercontent.com/facebookresearch/SymbolicMathematics/master/"
DEEPMIND = "https://storage.googleapis.com/mathematics-dataset/"


@dataclass(frozen=True)
class CorpusFile:
    """One file to fetch: ``url`` upstream, ``path`` under the data root (POSIX, relative), ``sha256`` of the upstream
    bytes (None: not pinned), ``size`` in bytes where known, and for a tar archive ``unpack``, the folder under the
    root it is unpacked into after its check (``""``: the root itself)."""

    url: str
    path: str
    sha256: str | None
    size: int | None = None
    unpack: str | None = None

    def as_json(self) -> dict:
        record = {"url": self.url, "sha256": self.sha256, "path": self.path, "size": self.size}
        if self.unpack is not None:
            record["unpack"] = self.unpack
        return record


@dataclass(frozen=True)
class Corpus:
    """A corpus: ``name`` is its folder under the data root; ``size`` is said in words (records, bytes)."""

    name: str
    title: str
    source: str
    licence: str
    size: str
    files: tuple[CorpusFile, ...]

    @property
    def pinned(self) -> str:
        """``all``, ``none`` or ``some``: which of its files have a sha256 recorded."""
        count = sum(file.sha256 is not None for file in self.files)
        return "all" if count == len(self.files) else "none" if count == 0 else "some"

    def as_json(self) -> dict:
        return {"name": self.name, "title": self.title, "source": self.source, "licence": self.licence,
                "size": self.size, "files": [file.as_json() for file in self.files]}


def checked_path(path: str) -> PurePosixPath:
    """``path`` as a relative POSIX path with no ``..``, empty or absolute part; anything else is a DownloadError (a
    catalogue entry must never name a file outside the data root)."""
    pure = PurePosixPath(path)
    if not path or "\\" in path or pure.is_absolute() or any(part in ("", ".", "..") for part in path.split("/")):
        raise DownloadError(f"{path!r}: not a relative path under the data root")
    return pure


def licence(folder: str, name: str, url: str, sha256: str | None, size: int | None) -> CorpusFile:
    return CorpusFile(url, f"{folder}/{name}", sha256, size)


SVAMP_LICENSE = (SVAMP + "LICENSE", "07ce3a34de7a865345634f9278bc26ddcacc2d0defd348c28e3f4603448b9ba4", 1068)
MWPTOOLKIT_LICENSE = (MWPTOOLKIT + "LICENSE", "79ad5e3c8e50bd6d4aca52fd0912449e33807da163d4df0512f53d927992aff6", 1087)
TREE_SMU_LICENSE = (TREE_SMU + "LICENSE", "4b2d4c2cfbabe05a5aecc2e266d78ff114e3a57193dd74fab0d51eb1b8c97b98", 1144)

# fold file -> (sha256, bytes) of the SVAMP repository's data/cv_mawps and data/cv_asdiv-a
MAWPS_FOLDS = {
    "fold0/train.csv": ("0674253e6099813cefbb1d6eae3d2dc784ab6ebfdaf8755f6ebb4b99fc1f6ebe", 595844),
    "fold0/dev.csv": ("bad59cff796b01a87363ea970f1fa80c15f56ff5f4388143aadbdc3feaf5f990", 148020),
    "fold1/train.csv": ("ad8846861202060f2dfcb8423d23218cbf6a4a67010d4d4d939b9df61b2d34b0", 593821),
    "fold1/dev.csv": ("31362cb8741f9fc11b470b224478902ae27ab762bdd82bcb08a9c945d5947422", 150043),
    "fold2/train.csv": ("b137a07367e1b3cd9556fae7b9e17fb5e23836e1e6dc9357719049ebc8860c62", 593895),
    "fold2/dev.csv": ("fae4f08a24a23123612ca5bb960e4f9aa7202c856344a59ab7adea424dfc670d", 149969),
    "fold3/train.csv": ("fb1e286a94feed24a41c5560095e21a33d61888c7c27a355e6ccef725deaf084", 597305),
    "fold3/dev.csv": ("5ac76e5559cdde0aa8bcac77eb9af46b9b0230f00661ad0257dbd58a1567a323", 146559),
    "fold4/train.csv": ("9194364265a42e0f146cc73f514c806c5d322827cd025a474ded33af076837bb", 594735),
    "fold4/dev.csv": ("1bb9164e6ba93fdc1bffddd8544c20cddc3c195a299b0b6c6893c2a760c3434b", 149129),
}
ASDIV_A_FOLDS = {
    "fold0/train.csv": ("5c711c9150712141bfde68abf5ee4aecb610563325901320aef41e1e5ecf6c84", 419240),
    "fold0/dev.csv": ("0813a90f336147b1229a6d1d133c29f7e585cb27cafd651976bb94449a4b81c0", 96533),
    "fold1/train.csv": ("77046a465a3e693b4b241dcbce2fe2cba7c9d3d253201e5e125273f6f95ade8a", 417474),
    "fold1/dev.csv": ("2432c24452fceb43c76f081342ebcd0e7b0f5776cb2908e621eeb4e2fad3cd17", 98299),
    "fold2/train.csv": ("25a7e1b542fb6c39181ab6005ec9e1eb68d049f0ca4367c87837d299feef3cd8", 407897),
    "fold2/dev.csv": ("63da38010296031a123c0bd9cb80701870f1e31fdf06a88442b3ab6500b36b84", 107876),
    "fold3/train.csv": ("618e38871a3b82b184f47c301cae011b16ba1d0d2062017e51899490d071d846", 410436),
    "fold3/dev.csv": ("7a45f3d18353e4ea8ffa2d1cb238e80068ad3bb5dbed4303231b3af0836d78e2", 105337),
    "fold4/train.csv": ("caf82cc29dafe77dda0aac8bf8af5c363c666e0e1480fbaedc47c504384b76fa", 407820),
    "fold4/dev.csv": ("b9fe1aacddc34ec2caed5e0c35faff2681198431b021d13e16dc2e7c61ec6ecb", 107953),
}


def folds(name: str, upstream: str, hashes: dict[str, tuple[str, int]]) -> tuple[CorpusFile, ...]:
    return (*(CorpusFile(f"{SVAMP}data/{upstream}/{file}", f"{name}/{file}", sha256, size)
              for file, (sha256, size) in hashes.items()),
            licence(name, "LICENSE-SVAMP-repo", *SVAMP_LICENSE))


SYMBOLIC_SETS = ("prim_fwd", "prim_bwd", "prim_ibp", "ode1", "ode2")
RELEASED = {  # the authors' released Tree-SMU and Tree-LSTM weights
    "exp_gatedpushpop_normalize_no_op_50_0.1_12345-model-97.checkpoint":
        ("fa1fbde4d09a616681716643fd954f441ebfb91b6bb0d24eceb616fb79bc3d35", 2190344),
    "exp_lstm_drop0.1_hidden50_12093-model-68.checkpoint":
        ("528761495da9926ee8a2c0b0445e3f8e30e4b80b7615b29ef2fe4ee9c1c1517f", 1496465),
}

CATALOGUE: tuple[Corpus, ...] = (
    Corpus("mawps-cv", "MAWPS, 5-fold cross-validation", "github.com/arkilpatel/SVAMP, data/cv_mawps",
           "MIT (SVAMP repository); MAWPS's own terms apply too", "1,921 problems, 3.7 MB",
           folds("mawps-cv", "cv_mawps", MAWPS_FOLDS)),
    Corpus("asdiv-a-cv", "ASDiv-A, 5-fold cross-validation", "github.com/arkilpatel/SVAMP, data/cv_asdiv-a",
           "MIT (SVAMP repository); ASDiv's own terms apply too", "1,217 problems, 2.6 MB",
           folds("asdiv-a-cv", "cv_asdiv-a", ASDIV_A_FOLDS)),
    Corpus("svamp", "SVAMP (test) with MAWPS + ASDiv-A (train); SVAMP.json with variation types",
           "github.com/arkilpatel/SVAMP, data/mawps-asdiv-a_svamp and SVAMP.json",
           "MIT (SVAMP repository)", "3,591 + 1,000 problems",
           (CorpusFile(SVAMP + "data/mawps-asdiv-a_svamp/train.csv", "svamp/train.csv", None),
            CorpusFile(SVAMP + "data/mawps-asdiv-a_svamp/dev.csv", "svamp/dev.csv", None),
            CorpusFile(SVAMP + "SVAMP.json", "svamp/SVAMP.json", None),
            licence("svamp", "LICENSE-SVAMP-repo", *SVAMP_LICENSE))),
    Corpus("mawps-json", "MAWPS with raw numbers, MWPToolkit's JSON", "github.com/LYH-YF/MWPToolkit, dataset/mawps",
           "MIT (MWPToolkit repository); MAWPS's own terms apply too", "2,373 problems, 0.9 MB",
           (CorpusFile(MWPTOOLKIT + "dataset/mawps/MAWPS.json", "mawps-json/MAWPS.json",
                       "00fbff19273045bba127ea4e881e381c813b4c452c139cf2c5c996addf131e9a", 925855),
            licence("mawps-json", "LICENSE-MWPToolkit-repo", *MWPTOOLKIT_LICENSE))),
    Corpus("math23k", "Math23K (Chinese), the validation and test parts",
           "github.com/LYH-YF/MWPToolkit, dataset/math23k",
           "MIT (MWPToolkit repository); Math23K's own terms apply too", "2,316 + 2,317 problems, 1.9 MB",
           (CorpusFile(MWPTOOLKIT + "dataset/math23k/validset.json", "math23k/validset.json",
                       "1b238b0cc20a517460aa8c086b99ae0cf79e2685cd73b606a8a32da16c1d1984", 963619),
            CorpusFile(MWPTOOLKIT + "dataset/math23k/testset.json", "math23k/testset.json",
                       "cd3d98fc918e1d1adf420d67e679c295687f02f166aa4e0da70920236c492e0e", 977832),
            licence("math23k", "LICENSE-MWPToolkit-repo", *MWPTOOLKIT_LICENSE))),
    Corpus("identities", "Tree-SMU's equation completion files and released checkpoints",
           "github.com/ForoughA/recursiveMemNet, data/ and checkpoints/", "MIT (Tree-SMU repository)",
           "277 blanks, 1,470 candidates, 2 checkpoints; 4.5 MB",
           (CorpusFile(TREE_SMU + "data/blanks/40k_test_blank_0.json", "identities/40k_test_blank_0.json",
                       "06d6e4e442c5d417c7b2fed4817fd8b24fef94795f0aca987f12aed8676431a8", 270761),
            CorpusFile(TREE_SMU + "data/candidate_classes.json", "identities/candidate_classes.json",
                       "56f72ae157c26ca7d8dd85c650b25e34016393195db5988b281d729e8bd67c0d", 572604),
            *(CorpusFile(f"{TREE_SMU}checkpoints/{name}", f"identities/released/{name}", sha256, size)
              for name, (sha256, size) in RELEASED.items()),
            licence("identities", "LICENSE-Tree-SMU-repo", *TREE_SMU_LICENSE),
            licence("identities/released", "LICENSE", *TREE_SMU_LICENSE))),
    Corpus("symbolic", "Lample & Charton's integration and ODE pairs (FWD, BWD, IBP, ODE1, ODE2)",
           "github.com/facebookresearch/SymbolicMathematics (Lample & Charton 2020)",
           "the repository's LICENSE (fetched with it); read it before use, in particular for commercial use",
           "23M to 88M training pairs per set; gigabytes per archive",
           (*(CorpusFile(f"{SYMBOLIC}{name}.tar.gz", f"symbolic/{name}.tar.gz", None, unpack="symbolic")
              for name in SYMBOLIC_SETS),
            licence("symbolic", "LICENSE-SymbolicMathematics-repo", SYMBOLIC_REPO + "LICENSE", None, None))),
    Corpus("mathematics_dataset-v1.0", "DeepMind's Mathematics Dataset, release v1.0",
           "github.com/google-deepmind/mathematics_dataset (Saxton et al. 2019)",
           "Apache 2.0 for the generator's code; no separate licence stated for the files",
           "about 112M question-answer pairs; gigabytes",
           (CorpusFile(DEEPMIND + "mathematics_dataset-v1.0.tar.gz", "mathematics_dataset-v1.0.tar.gz", None,
                       unpack=""),)),
)


def corpus_names() -> list[str]:
    return [corpus.name for corpus in CATALOGUE]


def select(names: list[str], catalogue: tuple[Corpus, ...] = CATALOGUE) -> list[tuple[Corpus, list[CorpusFile]]]:
    """The corpora and files that ``names`` ask for, in the order asked, each file once: a corpus name asks for all
    its files; a path under it (``symbolic/prim_bwd.tar.gz``, ``mawps-cv/fold0``) for the files there, with the
    corpus's licence files. An unknown name is a DownloadError that lists the known ones (and the closest)."""
    known = {corpus.name: corpus for corpus in catalogue}
    chosen: dict[str, tuple[Corpus, list[CorpusFile]]] = {}
    for name in names:
        wanted = name.strip().strip("/")
        corpus = known.get(wanted.split("/")[0])
        files = [] if corpus is None else [file for file in corpus.files if wanted == corpus.name or
                                           file.path == wanted or file.path.startswith(wanted + "/")]
        if not files:
            close = difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.5)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise DownloadError(f"{name}: no corpus of that name nor a file of one{hint}. Known corpora: "
                                f"{', '.join(known)} (`neuromath data list` describes them)")
        files += [file for file in corpus.files if PurePosixPath(file.path).name.startswith("LICENSE")]
        entry = chosen.setdefault(corpus.name, (corpus, []))
        entry[1].extend(file for file in files if file not in entry[1])
    return [(corpus, [file for file in corpus.files if file in files]) for corpus, files in chosen.values()]
