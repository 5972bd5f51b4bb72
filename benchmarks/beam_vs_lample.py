"""Beam search against Lample & Charton's ``generate_beam``, measured side by side in one run.

Usage: ``python benchmarks/beam_vs_lample.py --reference PATH [--shape small|paper] [--threads N] [--rounds R]
[--profile] [--quick] [--json FILE]``

``PATH`` is a checkout of facebookresearch/SymbolicMathematics (the code of "Deep Learning for Symbolic
Mathematics", Lample & Charton 2020). Only its ``src/model/transformer.py`` is read: it needs torch and numpy, nothing
else of that repository. Nothing of it is kept in this repository.

Both sides get the same job: beam 10 over 16 random sources of 40 tokens (plus eos), 30 decoding steps with eos made
impossible (ours through ``NoEosModel``; theirs through an output bias of -1e9 on eos, a weight and not a change to
their code), so every search runs exactly 30 steps and keeps 10 live hypotheses a source. Each call encodes the
sources and searches, as the evaluator of each code base does. The models have equal sizes and random weights:

- ``small`` (default, the speed issue's shapes): d_model 256, 8 heads, d_ff 1024, 3 encoder and 3 decoder layers;
- ``paper``: Lample & Charton's 512, 8 heads, d_ff 2048, 6 + 6 layers.

Both have learned positions (their default), tie the target embedding to the output projection and have 40 tokens;
ours is post-LayerNorm like theirs. The architectures differ in small ways (theirs normalises the embeddings once
more and scales them by 1 instead of sqrt(d)), so the two do not compute the same function and their hypotheses are
not compared; each side's own results are checked (the length of every best hypothesis shows that its search ran all
30 steps). Our beam runs in float32 and under bf16 autocast; theirs in float32 (their code as written) and under the
same autocast. The settings take turns round after round, so machine noise falls on all of them; reported are
medians and the ratios theirs / ours (above 1: ours is faster). ``--profile`` adds where one of our searches spends
its time (the top operators by self CPU time, per precision).

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attention import NoEosModel, collate  # noqa: E402  (the benchmarks share their synthetic data)
from precision import VOCAB, random_pairs  # noqa: E402

from neuromath.config import ModelConfig  # noqa: E402
from neuromath.decoding.beam import beam_search  # noqa: E402
from neuromath.models import ModelInputs, build_model  # noqa: E402
from neuromath.nn.precision import autocast, cpu_supports_bf16  # noqa: E402
from neuromath.text import Vocabulary  # noqa: E402

BEAM, SOURCES, SOURCE_LENGTH, STEPS = 10, 16, 40, 30
QUICK = dict(sources=4, steps=8)
SHAPES = {
    "small": dict(d_model=256, n_heads=8, d_ff=1024, n_encoder_layers=3, n_decoder_layers=3),
    "paper": dict(d_model=512, n_heads=8, d_ff=2048, n_encoder_layers=6, n_decoder_layers=6),
}


def load_reference(path: Path):
    """The ``transformer`` module of a SymbolicMathematics checkout, imported from its file."""
    source = path / "src" / "model" / "transformer.py"
    if not source.is_file():
        raise SystemExit(f"beam_vs_lample.py: {source} does not exist; --reference names a checkout of "
                         "facebookresearch/SymbolicMathematics")
    spec = importlib.util.spec_from_file_location("symbolic_mathematics_transformer", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("TransformerModel", "BeamHypotheses"):
        if not hasattr(module, name):
            raise SystemExit(f"beam_vs_lample.py: {source} has no {name}")
    return module


def build_theirs(module, shape: dict, seed: int):
    """Their encoder and decoder at ``shape``, eos made impossible through the output bias."""
    torch.manual_seed(seed)
    params = SimpleNamespace(
        n_words=VOCAB, eos_index=Vocabulary.eos_id, pad_index=Vocabulary.pad_id, emb_dim=shape["d_model"],
        n_heads=shape["n_heads"], n_enc_layers=shape["n_encoder_layers"], n_dec_layers=shape["n_decoder_layers"],
        dropout=0.0, attention_dropout=0.0, sinusoidal_embeddings=False,
        share_inout_emb=True,
    )
    if 4 * shape["d_model"] != shape["d_ff"]:
        raise ValueError("their feed-forward width is 4 d_model")
    words = [f"w{index}" for index in range(VOCAB)]
    encoder = module.TransformerModel(params, words, is_encoder=True, with_output=False).eval()
    decoder = module.TransformerModel(params, words, is_encoder=False, with_output=True).eval()
    with torch.no_grad():
        decoder.proj.bias[Vocabulary.eos_id] = -1e9
    return encoder, decoder


def build_ours(shape: dict, seed: int):
    torch.manual_seed(seed)
    config = ModelConfig(**shape, dropout=0.0, norm_first=False, share_embeddings=True, positions="learned",
                         positions_in="encoder,decoder", max_len=128)
    return NoEosModel(build_model(config, ModelInputs(VOCAB, VOCAB, Vocabulary.pad_id)).eval())


def run_theirs(encoder, decoder, batch: dict, steps: int) -> list[int]:
    """Encode and search as their evaluator does; the lengths of the best hypotheses (eos included)."""
    source = batch["source"]
    lengths = (source != Vocabulary.pad_id).sum(1)
    with torch.no_grad():
        encoded = encoder("fwd", x=source.t(), lengths=lengths, causal=False).transpose(0, 1)
        _, target_lengths, _ = decoder.generate_beam(encoded, lengths, beam_size=BEAM, length_penalty=1.0,
                                                     early_stopping=False, max_len=steps + 1)
    return target_lengths.tolist()


def run_ours(model, batch: dict, steps: int) -> list[int]:
    with torch.no_grad():
        rows = beam_search(model, batch, BEAM, steps, nbest=1)
    return [len(row[0].tokens) for row in rows]


def profile_ours(model, batch: dict, steps: int, precision: str, top: int = 6) -> list:
    """[operator, share of the search's self CPU time, calls] of the ``top`` operators of one search of ours."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler, autocast(precision, "cpu"):
        run_ours(model, batch, steps)
    events = sorted(profiler.key_averages(), key=lambda event: event.self_cpu_time_total, reverse=True)
    total = sum(event.self_cpu_time_total for event in events)
    return [[event.key, event.self_cpu_time_total / total, event.count] for event in events[:top]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True,
                        help="a checkout of facebookresearch/SymbolicMathematics")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="small", help="model sizes (default small)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per setting (default 5)")
    parser.add_argument("--quick", action="store_true", help="4 sources, 8 steps, 2 rounds: a smoke run")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one of our searches per precision: the share of its top operators")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    args = parser.parse_args(argv)
    sources, steps, rounds = (QUICK["sources"], QUICK["steps"], 2) if args.quick else (SOURCES, STEPS, args.rounds)

    torch.set_num_threads(args.threads)
    module = load_reference(args.reference)
    shape = SHAPES[args.shape]
    encoder, decoder = build_theirs(module, shape, 0)
    ours = build_ours(shape, 0)
    batch = collate(random_pairs(sources, SOURCE_LENGTH, 1, torch.Generator().manual_seed(0)))
    precisions = ["32-true"] + (["bf16-mixed"] if cpu_supports_bf16() else [])
    settings = [(side, precision) for precision in precisions for side in ("theirs", "ours")]

    def measure(side: str, precision: str) -> tuple[float, list[int]]:
        with autocast(precision, "cpu"):
            start = time.perf_counter()
            lengths = run_theirs(encoder, decoder, batch, steps) if side == "theirs" else run_ours(ours, batch, steps)
            return time.perf_counter() - start, lengths

    seconds = {setting: [] for setting in settings}
    failed = []
    for setting in settings:  # warm-up, and each side's own check
        _, lengths = measure(*setting)
        # theirs: its bos, the words of the first steps - 1 steps and the eos it appends (at max_len the last step's
        # word ends the hypothesis like an eos); ours: the generated tokens
        expected = steps + 1 if setting[0] == "theirs" else steps
        if lengths != [expected] * sources:
            failed.append(f"{' '.join(setting)}: best hypotheses of lengths {sorted(set(lengths))}, not {expected}")
    for _ in range(rounds):
        for setting in settings:
            seconds[setting].append(measure(*setting)[0])
    median = {setting: statistics.median(values) for setting, values in seconds.items()}

    print(f"beam {BEAM} over {sources} sources of {SOURCE_LENGTH} tokens, {steps} forced steps; shape {args.shape} "
          f"({', '.join(f'{key} {value}' for key, value in shape.items())}); {args.threads} threads; medians of "
          f"{rounds} rounds\n")
    print("| ours | theirs | seconds, ours / theirs | theirs / ours |")
    print("|---|---|---|---|")
    pairs = [(("ours", p), ("theirs", "32-true")) for p in precisions]
    if "bf16-mixed" in precisions:
        pairs.append((("ours", "bf16-mixed"), ("theirs", "bf16-mixed")))
    report = {"reference": str(args.reference), "shape": args.shape, "sizes": shape, "threads": args.threads,
              "rounds": rounds, "beam": BEAM, "sources": sources, "source_length": SOURCE_LENGTH, "steps": steps,
              "torch": torch.__version__, "seconds_median": {" ".join(s): median[s] for s in settings},
              "seconds_all": {" ".join(s): seconds[s] for s in settings}, "ratios": {}}
    for mine, theirs in pairs:
        ratio = median[theirs] / median[mine]
        print(f"| {mine[1]} | {theirs[1]} | {median[mine]:.3f} s / {median[theirs]:.3f} s | **{ratio:.2f}x** |")
        report["ratios"][f"theirs {theirs[1]} / ours {mine[1]}"] = ratio
    if args.profile:
        report["profile"] = {precision: profile_ours(ours, batch, steps, precision) for precision in precisions}
        for precision, operators in report["profile"].items():
            print(f"\nours, {precision}, one search: " + ", ".join(
                f"{name} {share:.0%} ({calls} calls)" for name, share, calls in operators))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    for line in failed:
        print(f"FAILED: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
