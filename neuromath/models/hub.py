"""Trained models by name on the Hugging Face Hub: ``org/name`` or ``org/name@revision`` (a branch, tag or commit)
wherever a trained model is named, and the upload of ``neuromath push``.

A name is a hub id when no file or folder of that name exists here and it has the shape of one; anything else is a
local path, read as before. A hub id is downloaded with ``huggingface_hub.snapshot_download`` into the Hugging Face
cache (``HF_HOME``, ``HF_HUB_CACHE``), so the second use reads the cache and ``HF_HUB_OFFLINE=1`` works from it.
Only the files of a ``neuromath export`` are fetched (``MODEL_FILES``), and the folder must be one: its config,
summary, card (whose header says ``library_name: neuromath``) and ``model.safetensors``, with no ``model.pt``, so a
model from the hub loads from safetensors only, never from a pickle.

``huggingface_hub`` (the ``hub`` extra) is imported only when a hub id is used (``neuromath.extras.require``); what
it raises is turned into one NeuromathError line. Shared by ``api`` (``neuromath.load``), ``training``
(``train.init_from``) and the command line, like ``neuromath.models.weights``."""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import yaml

from neuromath.errors import NeuromathError
from neuromath.extras import require
from neuromath.models.weights import EXPORTED_WEIGHTS, RUN_WEIGHTS
from neuromath.nn.pretrained import PRETRAINED_DIR, PRETRAINED_FILES
from neuromath.safe_read import SUMMARY_LIMIT, read_run_file

CARD = "README.md"
# What neuromath export writes, and all that is downloaded or uploaded: never model.pt, checkpoints or logs
MODEL_FILES = (CARD, "config.yaml", "summary.json", "environment.json", EXPORTED_WEIGHTS, "source_vocab.json",
               "target_vocab.json", "node_vocab.json", *(f"{PRETRAINED_DIR}/{name}" for name in PRETRAINED_FILES))
REQUIRED_FILES = ("config.yaml", "summary.json", EXPORTED_WEIGHTS, CARD)
LIBRARY = "neuromath"  # the card header's library_name

# A repository id as the Hub takes it (a namespace and a name of letters, digits, '-', '_' and '.'), then an
# optional @revision: a branch, tag or commit id, which may hold '/' (refs/pr/1) but never '..'
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
HUB_ID = re.compile(rf"(?P<repo>{_NAME}/{_NAME})(?:@(?P<revision>[A-Za-z0-9._-][A-Za-z0-9._/-]{{0,199}}))?")


@dataclass(frozen=True)
class HubId:
    """A model on the hub: its repository and the revision asked for (None: the default branch)."""

    repo_id: str
    revision: str | None = None

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")

    @property
    def folder_name(self) -> str:
        """A file name for this model (``org--name``, ``org--name@v1``): where outputs about it go."""
        return str(self).replace("/", "--")


def parse_hub_id(text: str, revision: bool = True) -> HubId | None:
    """``text`` as a hub id (with an ``@revision`` when ``revision``), or None when it does not have the shape of
    one. A name with ``--`` or ``..`` is not one (the Hub refuses those), nor a revision that climbs with ``..``."""
    match = HUB_ID.fullmatch(text)
    if match is None or "--" in match["repo"] or ".." in match["repo"] or (match["revision"] and not revision):
        return None
    if match["revision"] and (".." in match["revision"] or match["revision"].endswith("/")):
        return None
    return HubId(match["repo"], match["revision"])


def hub_id_of(name: str | Path) -> HubId | None:
    """The hub id that ``name`` is, or None when it is a local path: a file or folder of that name exists here, or
    it does not have the shape of a hub id (``runs/g2t`` that does not exist is read as a hub id)."""
    text = str(name)
    if os.path.lexists(text):
        return None
    return parse_hub_id(text)


def model_folder(name: str | Path) -> Path:
    """The folder of the trained model ``name``: the path itself when it is one (see ``hub_id_of``), else the hub
    model downloaded into the Hugging Face cache (or found there) and checked to be a neuromath export."""
    hub_id = hub_id_of(name)
    return Path(name) if hub_id is None else download_model(hub_id)


# ------------------------------------------------------------------------------------------------ downloading


@dataclass(frozen=True)
class Client:
    """The parts of ``huggingface_hub`` used here, imported when first needed."""

    snapshot_download: object
    HfApi: type
    errors: object  # huggingface_hub.errors
    constants: object  # huggingface_hub.constants: ENDPOINT, HF_HUB_CACHE, is_offline_mode


def client(purpose: str) -> Client:
    """``huggingface_hub``, or a MissingExtraError naming the ``hub`` extra and what needed it."""
    hub = require("huggingface_hub", purpose)
    errors = importlib.import_module("huggingface_hub.errors")
    constants = importlib.import_module("huggingface_hub.constants")
    return Client(hub.snapshot_download, hub.HfApi, errors, constants)


def download_model(hub_id: HubId) -> Path:
    """The snapshot folder of ``hub_id`` in the Hugging Face cache, fetched when it is not there: the files of an
    export only. Every way it can fail (no such model, no such revision, offline without a copy, the hub down) is a
    NeuromathError of one line that names the model."""
    hub = client(f"{hub_id} (no such folder here, so a model on the Hugging Face Hub)")
    try:
        folder = hub.snapshot_download(hub_id.repo_id, revision=hub_id.revision, allow_patterns=list(MODEL_FILES),
                                       library_name=LIBRARY)
    except Exception as error:
        raise download_failure(hub, hub_id, error) from None
    folder = Path(folder)
    check_model_folder(folder, str(hub_id), page_url(hub, hub_id.repo_id, hub_id.revision))
    return folder


def page_url(hub, repo_id: str, revision: str | None = None) -> str:
    """The model's page on the hub that ``HF_ENDPOINT`` names (huggingface.co unless set)."""
    url = f"{hub.constants.ENDPOINT}/{repo_id}"
    return url + (f"/tree/{quote(revision, safe='')}" if revision else "")


def download_failure(hub, hub_id: HubId, error: Exception) -> Exception:
    """What ``snapshot_download`` raised, as the one line a user reads; an error it does not know, unchanged."""
    errors = hub.errors
    url = page_url(hub, hub_id.repo_id)
    cache = hub.constants.HF_HUB_CACHE
    if isinstance(error, errors.RevisionNotFoundError):
        return NeuromathError(f"{hub_id}: {hub_id.repo_id} has no revision {hub_id.revision!r} on the hub (no such "
                              f"branch, tag or commit; see {url})")
    if isinstance(error, errors.GatedRepoError):
        return NeuromathError(f"{hub_id}: a gated model: accept its conditions at {url} and log in "
                              "(hf auth login, or HF_TOKEN)")
    if isinstance(error, errors.RepositoryNotFoundError):
        return NeuromathError(f"{hub_id}: no such model on the hub ({url}), and no such folder here (a private "
                              "model needs a token: hf auth login, or HF_TOKEN)")
    if isinstance(error, errors.IncompleteSnapshotError):
        return NeuromathError(f"{hub_id}: only part of it is in the Hugging Face cache ({cache}) and "
                              f"{unreachable(hub)}")
    if isinstance(error, errors.LocalEntryNotFoundError):
        return NeuromathError(f"{hub_id}: not in the Hugging Face cache ({cache}) and {unreachable(hub)}")
    failure = hub_failure(hub, error)
    return NeuromathError(f"{hub_id}: {failure}") if failure else error


def unreachable(hub) -> str:
    if hub.constants.is_offline_mode():
        return "HF_HUB_OFFLINE is set: unset it to download the model once"
    return f"the hub ({hub.constants.ENDPOINT}) cannot be reached"


def hub_failure(hub, error: Exception) -> str | None:
    """The reason of an error of the hub's client that is not about one model (offline, an HTTP status, no
    connection, an id the client refuses), or None for any other error."""
    if isinstance(error, hub.errors.OfflineModeIsEnabled):
        return "HF_HUB_OFFLINE is set, and this needs the hub"
    if isinstance(error, hub.errors.HfHubHTTPError) and getattr(error, "response", None) is not None:
        status = error.response.status_code
        if status in (401, 403):
            return (f"the hub refused ({status}): log in with a token that may do this (hf auth login, or "
                    "HF_TOKEN)")
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return f"the hub ({hub.constants.ENDPOINT}) answered {status}: {reason}"
    if type(error).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore") or isinstance(error, ConnectionError):
        return f"the hub ({hub.constants.ENDPOINT}) cannot be reached ({type(error).__name__})"
    if isinstance(error, hub.errors.HFValidationError):
        return f"not a valid hub id ({str(error).strip().splitlines()[0]})"
    return None


def check_model_folder(folder: Path, name: str, url: str) -> None:
    """``folder`` (a model from the hub) is a neuromath export: config.yaml, summary.json, model.safetensors and a
    card whose header says ``library_name: neuromath``, and no ``model.pt`` (which the loaders would prefer to the
    safetensors, and which a model from elsewhere must not make them read)."""
    if os.path.lexists(folder / RUN_WEIGHTS):
        raise NeuromathError(f"{name}: holds {RUN_WEIGHTS} ({folder}); a model from the hub loads from "
                             f"{EXPORTED_WEIGHTS} only")
    missing = [needed for needed in REQUIRED_FILES if not os.path.isfile(folder / needed)]
    if missing:
        raise NeuromathError(f"{name}: not a neuromath model (no {', '.join(missing)} at {url}); neuromath push "
                             "uploads a trained run as one")
    header = card_header(folder / CARD)
    if not isinstance(header, dict) or header.get("library_name") != LIBRARY:
        raise NeuromathError(f"{name}: not a neuromath model (its {CARD} does not say library_name: {LIBRARY}; "
                             f"{url})")


def card_header(path: Path) -> object:
    """The YAML front matter of a model card (between its first two ``---`` lines), or None when it has none."""
    text = read_run_file(path, SUMMARY_LIMIT, "model card").decode("utf-8", errors="replace")
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (line.strip() for line in lines[1:]):
        return None
    end = next(index for index, line in enumerate(lines[1:], 1) if line.strip() == "---")
    try:
        return yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return None


# ------------------------------------------------------------------------------------------------ uploading


def repo_id_of(text: str) -> str:
    """``text`` as the repository of ``neuromath push`` (``org/name``, no revision), or a NeuromathError."""
    hub_id = parse_hub_id(text, revision=False)
    if hub_id is None:
        raise NeuromathError(f"{text!r} is not a hub id: give org/name (letters, digits, '-', '_' and '.'; a "
                             "branch goes in --revision)")
    return hub_id.repo_id


def push_folder(folder: str | Path, repo_id: str, revision: str | None = None, private: bool = False,
                message: str | None = None) -> tuple[str, str]:
    """Upload the files of an export (``MODEL_FILES``) in ``folder`` to the model repository ``repo_id`` as one
    commit on ``revision`` (a branch, made from main when new; None: main), creating the repository when it does
    not exist (``private``: visible to its owner only). Returns the model's page and the commit id."""
    hub = client("neuromath push")
    api = hub.HfApi(library_name=LIBRARY)
    try:
        api.create_repo(repo_id, private=True if private else None, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo_id, branch=revision, exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, revision=revision,
                                 commit_message=message, allow_patterns=list(MODEL_FILES))
    except Exception as error:
        failure = hub_failure(hub, error)
        if failure is None and isinstance(error, ValueError):  # the card's header or an argument, refused
            failure = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if failure is None:
            raise
        raise NeuromathError(f"{repo_id}: {failure}") from None
    return page_url(hub, repo_id, revision), info.oid
