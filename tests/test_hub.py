"""Trained models by name (neuromath/models/hub.py, neuromath push, train.init_from): a run pushed to a hub loads by
its id with the predictions of the run itself, by branch, tag or commit, from the cache when offline, and bad ids are
one clear line. The hub is tests/support/fake_hub.py on 127.0.0.1, which the client reaches through HF_ENDPOINT;
huggingface_hub reads its settings when it is imported, so every use of it runs in a child process with its own
environment and Hugging Face cache."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.fake_hub import FakeHub, Repository

from neuromath.models.hub import MODEL_FILES, HubId, hub_id_of, parse_hub_id

PROBLEMS = ["Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",
            "Tom has 5 apples. He buys 3 more. How many apples does he have?",
            "A box holds 12 eggs. How many eggs are in 4 boxes?"]
TINY_WORD_PROBLEMS = ["model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1",
                      "model.n_decoder_layers=1", "train.max_epochs=1", "train.progress=false", "train.num_threads=1"]
TINY_IDENTITIES = ["model.d_model=8", "data.generate_train=200", "data.train_depths=1-3", "data.test_depths=4-4",
                   "optim.schedule=plateau", "train.max_epochs=1", "train.progress=false", "train.num_threads=1"]
# what a child process inherits of the hub's client settings: none (a real token or cache must never be used)
CLIENT_SETTINGS = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_OFFLINE")
PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def settings(hub_url: str, home: Path, offline: bool = False, token: bool = True) -> dict:
    """The environment of a child process that uses the hub at ``hub_url`` with the Hugging Face cache in
    ``home``."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(CLIENT_SETTINGS) and name.lower() not in PROXIES}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HUB_DISABLE_UPDATE_CHECK="1", NO_PROXY="127.0.0.1,localhost")
    if token:
        env["HF_TOKEN"] = "hf_test_token"
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def neuromath(env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``neuromath ARGS`` in a child process (``python -m neuromath``)."""
    return subprocess.run([sys.executable, "-m", "neuromath", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def python(env: dict, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def answers_of(env: dict, *models: str) -> list[list]:
    """The solve_many answers of each of ``models`` (folders or hub ids), loaded by neuromath.load in one child
    process."""
    code = ("import json, neuromath\n"
            f"for model in {list(models)!r}:\n"
            f"    print(json.dumps([s.to_json() for s in neuromath.load(model).solve_many({PROBLEMS!r})]))\n")
    result = python(env, code)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.strip().splitlines()[-len(models):]]


def error_line(result: subprocess.CompletedProcess, status: int = 2) -> str:
    """What a command that failed printed on stderr: one line, the error; ``status``: its exit status (solve's 2 for
    an error, 1 for the other commands)."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr[-3000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# ----------------------------------------------------------------------------------------------- the names


@pytest.mark.parametrize("text, expected", [
    ("org/name", HubId("org/name")),
    ("neuromath-toolkit/graph2tree-mawps", HubId("neuromath-toolkit/graph2tree-mawps")),
    ("org/name@v1", HubId("org/name", "v1")),
    ("org/name@refs/pr/1", HubId("org/name", "refs/pr/1")),
    ("org/name@" + "a" * 40, HubId("org/name", "a" * 40)),
    ("name", None), ("org/name/more", None), ("./org/name", None), ("/org/name", None), ("org/na--me", None),
    ("org/name@", None), ("org/name@../../x", None), ("org/-name", None), ("org/name.", None), ("org name/x", None),
])
def test_a_hub_id_is_org_slash_name_and_an_optional_revision(text, expected):
    assert parse_hub_id(text) == expected


def test_an_existing_path_is_never_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert hub_id_of("org/name") == HubId("org/name")
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert hub_id_of("org/name") is None
    assert HubId("org/name", "v1").folder_name == "org--name@v1"


# ----------------------------------------------------------------------------------------------- the hub


@pytest.fixture(scope="module")
def hub():
    with FakeHub() as fake:
        yield fake


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A word-problem Transformer trained on two generated files (so that its card has their sha256) and an
    identities Tree-LSTM, each trained by the neuromath command (so that its card has the command)."""
    root = tmp_path_factory.mktemp("hub-runs")
    env = {name: value for name, value in os.environ.items() if not name.startswith(CLIENT_SETTINGS)}
    for name, n, seed in (("train", 80, 0), ("test", 20, 1)):
        result = neuromath(env, "generate", "word_problems", "--n", str(n), "--seed", str(seed), "--out",
                           str(root / f"wp-{name}.jsonl"))
        assert result.returncode == 0, result.stderr[-3000:]
    wp = [sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer", "--out",
          str(root / "wp"), "--set", f"data.train={root / 'wp-train.jsonl'}", "--set",
          f"data.test={root / 'wp-test.jsonl'}", *(item for key in TINY_WORD_PROBLEMS for item in ("--set", key))]
    ids = [sys.executable, "-m", "neuromath", "train", "--config", "identities/tree_lstm", "--out", str(root / "ids"),
           *(item for key in TINY_IDENTITIES for item in ("--set", key))]
    trainings = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for command in (wp, ids)]
    for training in trainings:
        _, err = training.communicate(timeout=600)
        assert training.returncode == 0, err[-3000:]
    return {"wp": root / "wp", "ids": root / "ids", "data": root / "wp-test.jsonl"}


@pytest.fixture(scope="module")
def pushed(hub, runs, tmp_path_factory):
    """The word-problem run pushed as org/wp (main, then the branch v1) and the identities run exported and pushed
    as org/ids; returns the output of the first push."""
    home = tmp_path_factory.mktemp("hf-push")
    env = settings(hub.url, home)
    first = neuromath(env, "push", str(runs["wp"]), "org/wp")
    assert first.returncode == 0, first.stderr[-3000:]
    branch = neuromath(env, "push", str(runs["wp"]), "org/wp", "--revision", "v1", "--message", "the v1 branch",
                       "--json")
    assert branch.returncode == 0, branch.stderr[-3000:]
    first.branch_answer = json.loads(branch.stdout)  # --json: one object on stdout, nothing else
    exported = tmp_path_factory.mktemp("exports") / "ids"
    assert neuromath(env, "export", str(runs["ids"]), str(exported)).returncode == 0
    result = neuromath(env, "push", str(exported), "org/ids", "--private")
    assert result.returncode == 0, result.stderr[-3000:]
    return first


@pytest.mark.slow
def test_push_uploads_the_export_and_prints_the_models_page(hub, runs, pushed):
    assert pushed.stdout.strip().splitlines()[-1] == f"{hub.url}/org/wp"
    files = hub.files("org/wp")
    assert set(files) - {".gitattributes"} <= set(MODEL_FILES)
    assert {"model.safetensors", "config.yaml", "summary.json", "README.md", "source_vocab.json",
            "target_vocab.json", "environment.json"} <= set(files)
    pushed_summary, summary = json.loads(files["summary.json"]), json.loads((runs["wp"] / "summary.json").read_bytes())
    assert pushed_summary["run_dir"] == "wp"  # the folder's name: no path of the machine that trained it travels
    assert {key: value for key, value in pushed_summary.items() if key not in ("run_dir", "best_checkpoint")} == \
        {key: value for key, value in summary.items() if key not in ("run_dir", "best_checkpoint")}
    assert hub.repositories["org/ids"].private and "node_vocab.json" in hub.files("org/ids")
    assert hub.files("org/wp", "v1")["model.safetensors"] == files["model.safetensors"]


@pytest.mark.slow
def test_push_json_names_the_commit_and_files(hub, pushed):
    answer = pushed.branch_answer
    assert (answer["repo_id"], answer["revision"], answer["url"]) == ("org/wp", "v1", f"{hub.url}/org/wp/tree/v1")
    assert "model.safetensors" in answer["files"] and len(answer["commit"]) >= 12
    assert hub.files("org/wp", answer["commit"])["model.safetensors"] == hub.files("org/wp", "v1")["model.safetensors"]


@pytest.mark.slow
def test_the_pushed_card_carries_the_evidence_and_says_how_to_load_the_model(hub, runs, pushed):
    card = hub.files("org/wp")["README.md"].decode("utf-8")
    summary = json.loads((runs["wp"] / "summary.json").read_text(encoding="utf-8"))
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["library_name"] == "neuromath"
    metrics = header["model-index"][0]["results"][0]["metrics"]
    assert {m["type"]: m["value"] for m in metrics} == {key: summary["test"][key] for key in
                                                        ("value_accuracy", "equation_accuracy", "bleu")}
    assert "Command: `neuromath train --config word_problems/transformer --out wp" in card  # the run folder by name
    assert str(runs["wp"]) not in card
    assert f"on the {summary['test']['n']} examples of the test split" in card
    for name in ("wp-train.jsonl", "wp-test.jsonl"):
        digest = hashlib.sha256((runs["wp"].parent / name).read_bytes()).hexdigest()
        assert f"(sha256 `{digest}`)" in card
    environment = json.loads((runs["wp"] / "environment.json").read_text(encoding="utf-8"))
    assert f"- neuromath {environment['neuromath']}, commit" in card
    assert 'neuromath.load("org/wp")' in card and "pip install 'neuromath-toolkit[hub]'" in card
    assert "neuromath[" not in card and "neuromath solve org/wp " in card
    assert "in the folder that holds this card" not in card  # the run's usage, replaced


@pytest.mark.slow
def test_a_model_loads_by_name_with_the_runs_own_predictions(hub, runs, pushed, tmp_path):
    env = settings(hub.url, tmp_path / "hf")
    local, by_name = answers_of(env, str(runs["wp"]), "org/wp")
    assert by_name == local
    snapshots = list((tmp_path / "hf" / "hub" / "models--org--wp" / "snapshots").iterdir())
    [snapshot] = snapshots
    assert "model.safetensors" in {path.name for path in snapshot.iterdir()}
    assert not (snapshot / "model.pt").exists()
    # the command line takes the id too
    result = neuromath(env, "solve", "org/wp", PROBLEMS[1], "--json")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    assert json.loads(result.stdout)["equation"] == local[1]["equation"]


@pytest.mark.slow
def test_a_branch_tag_or_commit_names_a_revision(hub, runs, pushed, tmp_path):
    env = settings(hub.url, tmp_path / "hf")
    commit = hub.tag("org/wp", "t1", "v1")
    local, *revisions = answers_of(env, str(runs["wp"]), *(f"org/wp@{name}" for name in ("v1", "t1", commit)))
    assert revisions == [local] * 3
    line = error_line(neuromath(env, "solve", "org/wp@nope", PROBLEMS[0]))
    assert line == (f"error: org/wp@nope: org/wp has no revision 'nope' on the hub (no such branch, tag or "
                    f"commit; see {hub.url}/org/wp)")


@pytest.mark.slow
def test_a_model_in_the_cache_loads_offline_and_one_that_is_not_is_one_line(hub, runs, pushed, tmp_path):
    home = tmp_path / "hf"
    [online] = answers_of(settings(hub.url, home), "org/wp")
    count = len(hub.requests)
    assert answers_of(settings(hub.url, home, offline=True), "org/wp") == [online]
    assert len(hub.requests) == count  # not one request: from the cache
    line = error_line(neuromath(settings(hub.url, tmp_path / "empty", offline=True), "solve", "org/wp", PROBLEMS[0]))
    assert line.startswith("error: org/wp: not in the Hugging Face cache (") and line.endswith(
        "and HF_HUB_OFFLINE is set: unset it to download the model once")
    gone = "http://127.0.0.1:9"  # the discard port: nothing answers
    line = error_line(neuromath(settings(gone, tmp_path / "empty"), "solve", "org/wp", PROBLEMS[0]))
    assert line.endswith(f"and the hub ({gone}) cannot be reached"), line
    # with a copy in the cache, an unreachable hub is no obstacle either
    assert answers_of(settings(gone, home), "org/wp") == [online]


@pytest.mark.slow
def test_a_missing_model_or_folder_is_one_clear_line(hub, pushed, tmp_path):
    env = settings(hub.url, tmp_path / "hf")
    line = error_line(neuromath(env, "solve", "org/missing", PROBLEMS[0]))
    assert line.startswith(f"error: org/missing: no such model on the hub ({hub.url}/org/missing)")
    # a folder of that name here is read as a folder, with today's message
    (tmp_path / "org" / "missing").mkdir(parents=True)
    line = error_line(neuromath(env, "solve", "org/missing", PROBLEMS[0], cwd=tmp_path))
    assert line == "error: org/missing is not a run directory (no config.yaml)"


@pytest.mark.slow
def test_only_a_neuromath_export_is_loaded_and_never_a_pickle(hub, tmp_path):
    repository = hub.repositories["org/pickle"] = Repository()
    repository.refs["main"] = repository.commit({"README.md": b"---\nlibrary_name: neuromath\n---\n",
                                                 "config.yaml": b"data:\n  task: word_problems\n",
                                                 "summary.json": b"{}", "model.pt": b"not a pickle"}, None)
    other = hub.repositories["org/other"] = Repository()
    other.refs["main"] = other.commit({"README.md": b"---\nlibrary_name: transformers\n---\n",
                                       "config.yaml": b"{}", "summary.json": b"{}", "model.safetensors": b"x"}, None)
    env = settings(hub.url, tmp_path / "hf")
    line = error_line(neuromath(env, "solve", "org/pickle", PROBLEMS[0]))
    assert line == (f"error: org/pickle: not a neuromath model (no model.safetensors at {hub.url}/org/pickle); "
                    "neuromath push uploads a trained run as one")
    assert not list((tmp_path / "hf").rglob("model.pt"))  # never downloaded
    line = error_line(neuromath(env, "solve", "org/other", PROBLEMS[0]))
    assert line == (f"error: org/other: not a neuromath model (its README.md does not say library_name: neuromath; "
                    f"{hub.url}/org/other)")


@pytest.mark.slow
def test_init_from_takes_a_model_by_name(hub, runs, pushed, tmp_path):
    env = settings(hub.url, tmp_path / "hf")
    out = tmp_path / "fine-tuned"
    result = neuromath(env, "train", "--config", "identities/tree_lstm", "--out", str(out),
                       *(item for key in [*TINY_IDENTITIES, "train.init_from=org/ids"] for item in ("--set", key)))
    assert result.returncode == 0, result.stderr[-3000:]
    # the start model's node vocabulary, so that its embeddings keep their rows
    assert (out / "node_vocab.json").read_bytes() == (runs["ids"] / "node_vocab.json").read_bytes()
    assert yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))["train"]["init_from"] == "org/ids"


@pytest.mark.slow
def test_evaluate_and_serve_take_a_model_by_name(hub, runs, pushed, tmp_path):
    env = settings(hub.url, tmp_path / "hf")
    result = neuromath(env, "evaluate", "org/wp", "--data", str(runs["data"]), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads(result.stdout)
    predictions = Path(metrics["predictions"])  # beside the user, not inside the Hugging Face cache
    assert metrics["n"] == 20 and predictions.parent == Path("org--wp/evaluations")
    assert (tmp_path / predictions).is_file()
    pytest.importorskip("fastapi")
    code = ("from neuromath.serve.app import load_runs\nruns = load_runs(['org/wp'])\n"
            "print(sorted(runs), runs['wp'].info['task'], runs['wp'].info['accuracy_of'])\n")
    served = python(env, code)
    assert served.returncode == 0, served.stderr[-3000:]
    assert served.stdout.strip() == "['wp'] word_problems test"  # the score from the model's summary.json


@pytest.mark.slow
def test_push_without_a_token_or_the_extra_is_one_line(hub, runs, tmp_path):
    line = error_line(neuromath(settings(hub.url, tmp_path / "hf", token=False), "push", str(runs["wp"]),
                                "org/wp"), status=1)
    assert line.startswith("error: org/wp: the hub refused (401): log in")
    refused = neuromath(settings(hub.url, tmp_path / "hf"), "push", str(runs["wp"]), "org/wp@v1")
    assert refused.returncode == 2 and "argument REPO_ID: must be a hub id org/name" in refused.stderr
    no_hub = ("import sys\nsys.modules['huggingface_hub'] = None  # as if the extra were not installed\n"
              "import neuromath\nfrom neuromath.errors import MissingExtraError\n"
              "try:\n    neuromath.load('org/wp')\nexcept MissingExtraError as error:\n    print(error)\n")
    result = python(settings(hub.url, tmp_path / "hf"), no_hub)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == ("org/wp (no such folder here, so a model on the Hugging Face Hub) needs the "
                                     "'hub' extra (huggingface_hub is not installed): pip install "
                                     "'neuromath-toolkit[hub]'")
