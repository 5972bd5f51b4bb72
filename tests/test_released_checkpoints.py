"""The released Tree-SMU and Tree-LSTM of Arabshahi et al. (ForoughA/recursiveMemNet, MIT), imported with
``neuromath import released``, give the scores the authors' own code gives: every one of the 1,470 candidates on the
first three blanks of 40k_test_blank_0.json to 1e-4, and the same ranks of the right answer (the reference files
beside the checkpoints under the data root, identities/released/; see their README.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neuromath.api import load_classifier
from neuromath.cli import main
from neuromath.dataroot import data_root
from neuromath.errors import DataFormatError
from neuromath.sharing.import_released import import_released

IDENTITIES = data_root() / "identities"
RELEASED = IDENTITIES / "released"
CHECKPOINTS = {
    "tree_lstm": "exp_lstm_drop0.1_hidden50_12093-model-68.checkpoint",
    "tree_smu": "exp_gatedpushpop_normalize_no_op_50_0.1_12345-model-97.checkpoint",
}
REFERENCE_RANKS = {"tree_smu": {"raw": [5, 1, 283], "class": [1, 1, 192]},  # the README's
                   "tree_lstm": {"raw": [7, 30, 30], "class": [1, 1, 18]}}


def needed(model: str) -> None:
    files = [RELEASED / CHECKPOINTS[model], RELEASED / f"reference_{model}_blank0_first3.json",
             IDENTITIES / "40k_test_blank_0.json", IDENTITIES / "candidate_classes.json"]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        pytest.skip(f"the released checkpoints and reference scores are not under the data root: {missing[0]}")


@pytest.fixture(scope="module", params=sorted(CHECKPOINTS))
def imported(request, tmp_path_factory):
    """(model, run folder imported by the command line, the reference of its first three blanks)."""
    model = request.param
    needed(model)
    run = tmp_path_factory.mktemp("released") / model
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert main(["import", "released", str(RELEASED / CHECKPOINTS[model]), "--model", model,
                     "--out", str(run)]) == 0
    finally:
        torch.set_num_threads(threads)
    reference = json.loads((RELEASED / f"reference_{model}_blank0_first3.json").read_text())
    return model, run, reference


def first_blanks(tmp_path, n: int = 3):
    """A blank file of the first ``n`` records of 40k_test_blank_0.json (the ones the reference scored)."""
    groups = json.loads((IDENTITIES / "40k_test_blank_0.json").read_text())
    kept, left = [], n
    for group in groups:
        kept.append(group[:left])
        left -= len(kept[-1])
    path = tmp_path / "first_blanks.json"
    path.write_text(json.dumps(kept))
    return path


def reference_arrays(blank: dict, n_candidates: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The reference scores by candidate, each candidate's class and the right candidate."""
    scores, classes, right = np.full(n_candidates, np.nan), np.zeros(n_candidates, dtype=int), None
    for entry in blank["scores"]:
        scores[entry["candidate"]], classes[entry["candidate"]] = entry["score"], entry["class"]
        if entry["label"] == 1:
            right = entry["candidate"]
    assert not np.isnan(scores).any() and right is not None
    return scores, classes, right


def ranks(scores: np.ndarray, classes: np.ndarray, right: int) -> tuple[int, int]:
    """The raw rank of the right candidate and the rank of the first candidate of its class, by score (highest
    first, ties in candidate order, as the authors' stable sort)."""
    order = np.argsort(-scores, kind="stable")
    raw = int(np.nonzero(order == right)[0][0]) + 1
    first_of_class = int(np.nonzero(classes[order] == classes[right])[0][0]) + 1
    return raw, first_of_class


def test_imported_models_give_the_authors_scores(imported, tmp_path, one_thread):
    model, run, reference = imported
    out = tmp_path / "scores.jsonl"
    assert main(["complete", str(run), "--threads", "1", "--blanks", str(first_blanks(tmp_path)),
                 "--candidates", str(IDENTITIES / "candidate_classes.json"), "--scores", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["depth"], line["index"]) for line in lines] == [
        (blank["blank"]["group"], blank["blank"]["index"]) for blank in reference["per_blank"]]
    for line, blank, raw, class_rank in zip(lines, reference["per_blank"], REFERENCE_RANKS[model]["raw"],
                                            REFERENCE_RANKS[model]["class"]):
        expected, classes, right = reference_arrays(blank, len(line["scores"]))
        got = np.asarray(line["scores"])
        assert got.shape == (1470,)
        assert np.abs(got - expected).max() < 1e-4, f"{model}: largest difference {np.abs(got - expected).max()}"
        assert ranks(got, classes, right) == ranks(expected, classes, right) == (raw, class_rank)
        assert blank["ranks"]["raw"] == raw and blank["ranks"]["class"] == class_rank


def test_imported_model_solves_an_identity(imported):
    _, run, _ = imported
    verdict = load_classifier(run).solve("sin(x)^2 + cos(x)^2 = 1")
    assert verdict.identity and not verdict.unknown_tokens
    assert main(["solve", str(run), "sin(x)^2 + cos(x)^2 = 1"]) == 0


def test_serve_answers_with_an_imported_model(imported):
    from fastapi.testclient import TestClient

    from neuromath.serve.app import create_app

    _, run, _ = imported
    with TestClient(create_app([run], max_wait_ms=1)) as client:
        listed = client.get("/api/runs").json()
        answer = client.post("/api/solve", json={"run": listed[0]["name"], "text": "sin(x)^2 + cos(x)^2 = 1"})
    assert listed[0]["task"] == "identities"
    expected = load_classifier(run).solve("sin(x)^2 + cos(x)^2 = 1").to_json()
    assert answer.status_code == 200 and answer.json() == expected and expected["identity"] is True


def test_imported_run_folder_has_a_card_naming_the_source_and_licence(imported):
    _, run, _ = imported
    card = (run / "README.md").read_text()
    assert "ForoughA/recursiveMemNet" in card and "license: mit" in card and "MIT" in card
    summary = json.loads((run / "summary.json").read_text())
    assert summary["imported"] and summary["source"] == "ForoughA/recursiveMemNet"


def test_a_state_dict_of_the_other_model_is_refused_naming_the_key(tmp_path):
    needed("tree_lstm")
    with pytest.raises(DataFormatError, match=r"no key sin\.o_linear\.weight"):
        import_released(RELEASED / CHECKPOINTS["tree_lstm"], "tree_smu", tmp_path / "wrong")
    assert not (tmp_path / "wrong").exists()


def test_a_state_dict_of_another_shape_is_refused_naming_the_key_and_shapes(tmp_path):
    needed("tree_lstm")
    state = torch.load(RELEASED / CHECKPOINTS["tree_lstm"], weights_only=True)
    state["Add.data_left.weight"] = state["Add.data_left.weight"][:, :10]
    torch.save(state, tmp_path / "cut.checkpoint")
    shapes = r"Add\.data_left\.weight has shape \(50, 10\), the model's is \(50, 50\)"
    with pytest.raises(DataFormatError, match=shapes):
        import_released(tmp_path / "cut.checkpoint", "tree_lstm", tmp_path / "wrong")
