"""benchmarks/beam_vs_lample.py: it names a missing reference checkout, times both sides, and fails when the
reference's search does not run the forced number of steps. The reference here is a stand-in with the interface of
Lample & Charton's ``TransformerModel`` (``fwd`` and ``generate_beam``), not their code."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "beam_vs_lample.py"

STAND_IN = '''
import torch
import torch.nn as nn


class BeamHypotheses:
    pass


class TransformerModel(nn.Module):
    def __init__(self, params, id2word, is_encoder, with_output):
        super().__init__()
        assert len(id2word) == params.n_words
        self.embeddings = nn.Embedding(params.n_words, params.emb_dim)
        if with_output:
            self.proj = nn.Linear(params.emb_dim, params.n_words)
        self.eos_index = params.eos_index

    def forward(self, mode, x, lengths, causal):
        assert mode == "fwd" and not causal
        return self.embeddings(x)  # (slen, bs, dim)

    def generate_beam(self, src_enc, src_len, beam_size, length_penalty, early_stopping, max_len=200):
        bs = src_enc.size(0)
        steps = max_len - 1 - SHORT  # a search of max_len - 1 steps keeps hypotheses of that many tokens
        logits = self.proj(src_enc.mean(1))  # (bs, n_words)
        assert logits[:, self.eos_index].max() < -1e8  # the benchmark made eos impossible
        tgt_len = torch.full((bs,), steps + 1, dtype=torch.long)  # + 1: the eos appended to the best one
        return None, tgt_len, None
'''


def reference(tmp_path: Path, short: int) -> Path:
    folder = tmp_path / f"reference{short}"
    (folder / "src" / "model").mkdir(parents=True)
    (folder / "src" / "model" / "transformer.py").write_text(STAND_IN.replace("SHORT", str(short)))
    return folder


def run(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--quick", "--threads", "1", *map(str, arguments)],
                          capture_output=True, text=True, timeout=600)


def test_a_missing_reference_is_named(tmp_path):
    done = run("--reference", tmp_path / "nowhere")
    assert done.returncode != 0
    assert str(tmp_path / "nowhere" / "src" / "model" / "transformer.py") in done.stderr
    assert "SymbolicMathematics" in done.stderr


def test_both_sides_are_timed_and_their_ratios_written(tmp_path):
    out = tmp_path / "beam.json"
    done = run("--reference", reference(tmp_path, 0), "--json", out)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["steps"] == 8 and report["sources"] == 4 and report["beam"] == 10
    assert len(report["seconds_all"]["ours 32-true"]) == report["rounds"] == 2
    assert report["ratios"]["theirs 32-true / ours 32-true"] > 0
    assert "| 32-true | 32-true |" in done.stdout


def test_a_reference_search_that_stops_early_fails_the_run(tmp_path):
    done = run("--reference", reference(tmp_path, 2))
    assert done.returncode == 1
    assert "FAILED: theirs 32-true: best hypotheses of lengths [7], not 9" in done.stdout
