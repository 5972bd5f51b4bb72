"""benchmarks/graph2tree_vs_svamp.py and gts_vs_seq2tree.py: they name a missing reference, hand the reference pairs
in the shape its ``transfer_num`` makes, time every setting, and fail on a reference step whose loss is not finite.
The references here are stand-ins with the interfaces of the SVAMP repository's ``src.train_and_evaluate`` (and its
imports of gensim, nltk and pandas) and of math_seq2tree's, not their code."""

import csv
import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "graph2tree_vs_svamp.py"
GTS_SCRIPT = SCRIPT.with_name("gts_vs_seq2tree.py")

# What both stand-ins have, with the references' signatures: the vocabulary and the decoder's parts.
SHARED = '''
import torch
import torch.nn as nn


class Lang:
    def __init__(self, words):
        self.index2word = list(words)
        self.word2index = {word: i for i, word in enumerate(self.index2word)}
        self.n_words = len(self.index2word)


class Prediction(nn.Module):
    def __init__(self, hidden_size, op_nums, input_size, dropout=0.5):
        super().__init__()
        self.out = nn.Linear(hidden_size, op_nums + input_size)


class GenerateNode(nn.Module):
    def __init__(self, hidden_size, op_nums, embedding_size, dropout=0.5):
        super().__init__()
        self.embeddings = nn.Embedding(op_nums, embedding_size)


class Merge(nn.Module):
    def __init__(self, hidden_size, embedding_size, dropout=0.5):
        super().__init__()
        self.merge = nn.Linear(hidden_size * 2 + embedding_size, hidden_size)
'''

STAND_IN = SHARED + '''
import collections

from gensim import models  # noqa: F401  (as their models.py does)
import nltk  # noqa: F401  (as their pre_data.py does)
import pandas as pd  # noqa: F401

LOSS = LOSS_VALUE



def prepare_data(config, logger, pairs, tested, trim, generate_nums, copy_nums, tree=False):
    assert tree and tested == [] and config.embedding == "random" and trim == 1
    counts = collections.Counter()
    for words, equation, numbers, positions, cells in pairs:
        assert [i for i, word in enumerate(words) if word == "NUM"] == positions, words
        assert len(positions) == len(numbers) <= copy_nums
        assert not set(cells) & set(positions) and all(0 <= cell < len(words) for cell in cells)
        for token in equation:
            if token[0] == "N":
                assert int(token[1:]) < len(numbers), (equation, numbers)
            elif token not in "+-*/":
                counts[token] += 1
    assert sorted(generate_nums) == sorted(c for c, n in counts.items() if n >= 5), (generate_nums, counts)
    inputs = Lang(["PAD", "NUM", "UNK"] + sorted({w for pair in pairs for w in pair[0]} - {"NUM"}))
    outputs = Lang(["+", "-", "*", "/"] + list(generate_nums) + [f"N{i}" for i in range(copy_nums)] + ["UNK"])
    prepared = [([inputs.word2index[w] for w in pair[0]], len(pair[0]), pair[1], len(pair[1]), pair[2], pair[3],
                 [], pair[4]) for pair in pairs]
    return inputs, outputs, prepared, []


def prepare_train_batch(pairs, batch_size):
    assert len(pairs) <= batch_size
    longest = max(pair[1] for pair in pairs)
    inputs = [pair[0] + [0] * (longest - pair[1]) for pair in pairs]
    columns = [inputs, [p[1] for p in pairs], [p[2] for p in pairs], [p[3] for p in pairs], [len(p[4]) for p in pairs],
               [p[6] for p in pairs], [p[5] for p in pairs], [len(p[5]) for p in pairs], [p[4] for p in pairs],
               None, [p[7] for p in pairs]]
    return tuple([column] for column in columns)


class Embedding(nn.Module):
    def __init__(self, config, input_lang, input_size, embedding_size, dropout=0.5):
        super().__init__()
        self.embedding = nn.Embedding(input_size, embedding_size)


class EncoderSeq(nn.Module):
    def __init__(self, cell_type, embedding_size, hidden_size, n_layers=2, dropout=0.5):
        super().__init__()
        assert cell_type == "gru" and n_layers == 2
        self.project = nn.Linear(embedding_size, hidden_size)



def train_tree(config, input_batch, input_length, target_batch, target_length, nums_stack_batch, num_size_batch,
               num_value_batch, group_batch, generate_nums, embedding, encoder, predict, generate, merge,
               embedding_optimizer, encoder_optimizer, predict_optimizer, generate_optimizer, merge_optimizer,
               input_lang, output_lang, num_pos, batch_graph, english=False):
    assert len(input_batch) == len(input_length) == len(num_pos) == len(group_batch)
    for optimizer in (embedding_optimizer, encoder_optimizer, predict_optimizer):
        optimizer.zero_grad()
    hidden = encoder.project(embedding.embedding(torch.LongTensor(input_batch)).mean(1))
    loss = predict.out(hidden).logsumexp(1).mean()
    loss.backward()
    for optimizer in (embedding_optimizer, encoder_optimizer, predict_optimizer):
        optimizer.step()
    return float("nan") if LOSS == "nan" else loss.item()
'''


def reference(tmp_path: Path, loss: str = "real") -> Path:
    folder = tmp_path / f"graph2tree-{loss}"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "train_and_evaluate.py").write_text(STAND_IN.replace("LOSS_VALUE", repr(loss)))
    return folder


def word_problems(path: Path, rows: int = 24) -> Path:
    """A MAWPS-style CSV whose equations use the constant 1 often enough (five times or more) to be generated."""
    rng = random.Random(0)
    shapes = [("+ number0 number1", lambda a, b, c: a + b), ("- * number0 number1 + number2 1",
                                                                lambda a, b, c: a * b - (c + 1))]
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["Question", "Numbers", "Equation", "Answer"])
        for row in range(rows):
            equation, value = shapes[row % 2]
            a, b, c = (float(rng.randint(2, 20)) for _ in range(3))
            question = f"Tom has number0 apples , number1 pears and number2 plums . How many {rng.choice('abc')} ?"
            writer.writerow([question, f"{a} {b} {c}", equation, value(a, b, c)])
    return path


def run(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--quick", "--threads", "1", *map(str, arguments)],
                          capture_output=True, text=True, timeout=600)


def test_a_missing_reference_is_named(tmp_path):
    done = run("--reference", tmp_path / "nowhere", "--train", word_problems(tmp_path / "train.csv"))
    assert done.returncode != 0
    assert str(tmp_path / "nowhere" / "src" / "train_and_evaluate.py") in done.stderr
    assert "arkilpatel/SVAMP" in done.stderr


def test_every_setting_is_timed_on_pairs_in_their_shape(tmp_path):
    out = tmp_path / "g2t.json"
    done = run("--reference", reference(tmp_path), "--train", word_problems(tmp_path / "train.csv"), "--json", out)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    absent = [name for name in ("gensim", "nltk", "pandas") if importlib.util.find_spec(name) is None]
    assert sorted(report["placeholders"]) == absent
    assert report["batches"] == 2 and report["batch_size"] == 8 and report["steps_per_epoch"] == 3
    rows = report["rows"]
    assert [row["setting"] for row in rows] == ["theirs", "ours", "ours", "levels", "levels"]
    assert [rows[i]["precision"] for i in (0, 1, 3)] == ["32-true"] * 3 and rows[2]["precision"] == rows[4]["precision"]
    assert all(row["seconds_per_step"] > 0 and len(row["seconds_all"]) == 1 for row in rows)
    for row in rows:  # each ratio is their step's time over the row's
        assert row["theirs_over_this"] == pytest.approx(rows[0]["seconds_per_step"] / row["seconds_per_step"])
    assert report["parameters"]["theirs"] > 0 and report["parameters"]["ours"] > 0
    assert "| theirs | 32-true |" in done.stdout


def test_a_reference_loss_that_is_not_finite_fails_the_run(tmp_path):
    done = run("--reference", reference(tmp_path, "nan"), "--train", word_problems(tmp_path / "train.csv"))
    assert done.returncode == 1
    assert "theirs 32-true: loss nan" in done.stderr


GTS_STAND_IN = SHARED + '''



def prepare_data(pairs, tested, trim, generate_nums, copy_nums, tree=False):
    assert tree and tested == [] and trim == 5
    for words, equation, numbers, positions in pairs:  # GTS pairs have no quantity cells
        assert [i for i, word in enumerate(words) if word == "NUM"] == positions and len(positions) == len(numbers)
    inputs = Lang(["PAD", "NUM", "UNK"] + sorted({w for pair in pairs for w in pair[0]} - {"NUM"}))
    outputs = Lang(["+", "-", "*", "/"] + list(generate_nums) + [f"N{i}" for i in range(copy_nums)] + ["UNK"])
    return inputs, outputs, [([inputs.word2index[w] for w in p[0]], len(p[0]), p[1], len(p[1]), p[2], p[3], [])
                             for p in pairs], []


def prepare_train_batch(pairs, batch_size):
    longest = max(pair[1] for pair in pairs)
    columns = [[p[0] + [0] * (longest - p[1]) for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs],
               [p[3] for p in pairs], [len(p[4]) for p in pairs], [p[6] for p in pairs], [p[5] for p in pairs],
               [len(p[5]) for p in pairs]]
    return tuple([column] for column in columns)


class EncoderSeq(nn.Module):
    def __init__(self, input_size, embedding_size, hidden_size, n_layers=2, dropout=0.5):
        super().__init__()
        assert (embedding_size, hidden_size, n_layers) == (128, 512, 2)
        self.embedding = nn.Embedding(input_size, embedding_size)
        self.project = nn.Linear(embedding_size, hidden_size)



def train_tree(input_batch, input_length, target_batch, target_length, nums_stack_batch, num_size_batch,
               generate_nums, encoder, predict, generate, merge, encoder_optimizer, predict_optimizer,
               generate_optimizer, merge_optimizer, output_lang, num_pos, english=False):
    encoder_optimizer.zero_grad()
    predict_optimizer.zero_grad()
    hidden = encoder.project(encoder.embedding(torch.LongTensor(input_batch)).mean(1))
    loss = predict.out(hidden).logsumexp(1).mean()
    loss.backward()
    encoder_optimizer.step()
    predict_optimizer.step()
    return loss.item()
'''


def test_the_gts_benchmark_times_every_setting_against_its_reference(tmp_path):
    folder = tmp_path / "math_seq2tree"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "train_and_evaluate.py").write_text(GTS_STAND_IN)
    out = tmp_path / "gts.json"
    done = subprocess.run([sys.executable, str(GTS_SCRIPT), "--quick", "--threads", "1", "--reference", str(folder),
                           "--train", str(word_problems(tmp_path / "train.csv", rows=140)), "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["batch_size"] == 64 and report["steps_per_epoch"] == 3
    assert report["placeholders"] == []  # this reference imports none of them
    assert [row["setting"] for row in report["rows"]] == ["theirs", "ours", "ours", "levels", "levels"]
    assert all(row["seconds_per_step"] > 0 for row in report["rows"])
    done = subprocess.run([sys.executable, str(GTS_SCRIPT), "--quick", "--reference", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "ShichaoSun/math_seq2tree" in done.stderr
