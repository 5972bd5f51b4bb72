"""Beam search against the code of an earlier commit, and against greedy decoding, measured in one run.

Usage: ``python benchmarks/decoding.py [--baseline REV] [--threads N] [--rounds R] [--quick] [--json FILE]``

The shapes are the speed issue's: d_model 256, 8 heads, d_ff 1024, 3 encoder and 3 decoder layers, target
vocabulary 40 (``precision.py``'s ``build``), beam 10 over 16 random sources of 40 tokens, eos forbidden so every
search runs exactly 30 steps; the standard Transformer and the TP-Transformer. ``--baseline`` (default 6486a0a, the
last commit before the beam-search work) is unpacked with ``git archive`` into a temporary folder, and each side
runs in its own worker process (the same Python, the same thread count, the same seeded weights; the baseline must
have ``neuromath.nn.precision``, so 6486a0a or later): the workers take turns, round after round, so machine noise
falls on both; reported are medians. Printed:

- today's fp32 beam against the baseline's fp32 beam (the speed-up), and whether both find the same best
  hypothesis for every source (they must: fp32 results are unchanged);
- today's beam under ``bf16-mixed`` autocast against the baseline's fp32 beam and against the baseline's own bf16
  beam, with how many best hypotheses
  agree with fp32 and the largest difference of their normalised scores;
- beam 10 / greedy for today's code, in fp32 and in bf16;
- the floor of that ratio: the model's own decoding steps over batch x beam rows (one memory row per source, as beam
  search keeps it; each row takes its own argmax, no search) against greedy decoding of the batch. Beam search
  cannot cost less than these steps, whatever its selection and cache handling; beam / steps is what the search
  itself adds. Every row of those steps must find greedy decoding's tokens for its source (checked, fp32).

A script, not a test: it prints numbers and exits 0 unless something breaks (or the fp32 results differ).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
BASELINE = "6486a0a"
BEAM, SOURCES, SOURCE_LENGTH, STEPS = 10, 16, 40, 30
QUICK = dict(sources=4, steps=8)


# ---------------------------------------------------------------------------- worker (one code base per process)


def worker(threads: int, sources: int, steps: int) -> None:
    """Answer one JSON line per request line ``{"attention", "what", "precision"}`` on stdin. Imports happen here,
    in the worker, so that they read the ``neuromath`` of the worker's PYTHONPATH (the baseline's or today's); the
    model, the random sources and the eos-forbidding wrapper are those of ``precision.py`` and ``attention.py``."""
    import torch
    from attention import NoEosModel, collate
    from precision import build, random_pairs

    from neuromath.decoding.beam import beam_search
    from neuromath.decoding.greedy import greedy_decode
    from neuromath.nn.precision import autocast

    torch.set_num_threads(threads)
    batch = collate(random_pairs(sources, SOURCE_LENGTH, 1, torch.Generator().manual_seed(0)))
    models = {}
    for line in sys.stdin:
        request = json.loads(line)
        attention = request["attention"]
        if attention not in models:
            models[attention] = NoEosModel(build(attention, 0).eval())
        model = models[attention]
        with autocast(request["precision"], "cpu"):
            start = time.perf_counter()
            if request["what"] == "steps":
                best, scores = decoder_steps(model, batch, BEAM, steps), None
            elif request["what"] == "beam":
                rows = beam_search(model, batch, BEAM, steps, nbest=1)
                best = [row[0].tokens for row in rows]
                scores = [row[0].normalized for row in rows]
            else:
                best, scores = greedy_decode(model, batch, steps), None
            seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "best": best, "scores": scores}), flush=True)


def decoder_steps(model, batch: dict, rows_per_source: int, steps: int) -> list[list[int]]:
    """``steps`` decoding steps of ``model`` over ``rows_per_source`` rows per source, with the work beam search
    gives the model and nothing else: the first step on one row per source, its cache copied to every row, the memory
    kept per source when the model shares it across beams; each row then feeds back its own argmax."""
    import torch

    from neuromath.text import Vocabulary

    with torch.no_grad():
        memory = model.encode(batch)
        sources = batch["source"].size(0)
        prefix = torch.full((sources, 1), Vocabulary.bos_id, dtype=torch.long)
        shared = model.shares_memory_across_beams
        log_probs, cache = model.decode_step({**memory, "beam_group": 1} if shared else memory, prefix, None)
        copies = torch.arange(sources).repeat_interleave(rows_per_source)
        cache = model.reorder_cache(cache, copies)
        if shared:
            memory = {**memory, "beam_group": rows_per_source}
        else:
            memory = {key: value.index_select(0, copies) if isinstance(value, torch.Tensor) else value
                      for key, value in memory.items()}
        prefix = torch.cat([prefix.index_select(0, copies), log_probs.argmax(-1).index_select(0, copies)[:, None]], 1)
        for _ in range(steps - 1):
            log_probs, cache = model.decode_step(memory, prefix, cache)
            prefix = torch.cat([prefix, log_probs.argmax(-1, keepdim=True)], 1)
    return prefix[:, 1:].tolist()


# ---------------------------------------------------------------------------- driver


class Worker:
    """``script --worker --threads N ARGS`` in a process of its own that imports the ``neuromath`` of
    ``package_root`` (today's or an unpacked baseline's); ``ask`` sends one JSON request line and reads one JSON
    answer line. The benchmarks that compare with an earlier commit (this one, ``training_step.py``,
    ``tree_speed.py``) share it."""

    def __init__(self, script: str | Path, package_root: Path, threads: int, arguments: list[str]):
        environment = {**os.environ, "PYTHONPATH": str(package_root), "OMP_NUM_THREADS": str(threads)}
        self.process = subprocess.Popen(
            [sys.executable, str(Path(script).resolve()), "--worker", "--threads", str(threads), *arguments],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment, cwd=package_root,
        )

    def ask(self, **request) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a benchmark worker stopped (exit {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def unpack(revision: str, folder: Path) -> Path:
    """The ``neuromath`` package of ``revision`` unpacked under ``folder``."""
    try:
        archive = subprocess.run(["git", "-C", str(REPOSITORY), "archive", revision, "neuromath"],
                                 check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise SystemExit(f"decoding.py: cannot read revision {revision!r} with git archive in {REPOSITORY}: "
                         f"{detail.decode().strip() or error}") from None
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision to compare with (default {BASELINE})")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads of each worker (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per setting (default 5)")
    parser.add_argument("--attention", default="standard,tp", help="comma list of kernels (default standard,tp)")
    parser.add_argument("--quick", action="store_true", help="4 sources, 8 steps, 2 rounds: a smoke run")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sources", type=int, default=SOURCES, help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=STEPS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.sources, args.steps, args.rounds = QUICK["sources"], QUICK["steps"], 2
    if args.worker:
        worker(args.threads, args.sources, args.steps)
        return 0

    settings = [  # (code, what, precision)
        ("baseline", "beam", "32-true"), ("today", "beam", "32-true"), ("today", "beam", "bf16-mixed"),
        ("today", "greedy", "32-true"), ("today", "greedy", "bf16-mixed"),
        ("today", "steps", "32-true"), ("today", "steps", "bf16-mixed"), ("baseline", "beam", "bf16-mixed"),
    ]
    report = {"baseline": args.baseline, "threads": args.threads, "rounds": args.rounds, "beam": BEAM,
              "sources": args.sources, "steps": args.steps}
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        sizes = ["--sources", str(args.sources), "--steps", str(args.steps)]
        workers = {"baseline": Worker(__file__, unpack(args.baseline, Path(folder)), args.threads, sizes),
                   "today": Worker(__file__, REPOSITORY, args.threads, sizes)}
        print(f"beam {BEAM} over {args.sources} sources of {SOURCE_LENGTH} tokens, {args.steps} forced steps; "
              f"{args.threads} threads per worker; baseline {args.baseline}; medians of {args.rounds} rounds\n")
        print("| model | today fp32 beam / baseline | today bf16 beam / baseline fp32 | today bf16 / baseline bf16 | "
              "beam / greedy (fp32) | beam / greedy (bf16) | floor: steps / greedy (fp32, bf16) | "
              "beam / steps (fp32, bf16) | same best fp32 vs baseline | bf16 vs fp32 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for attention in args.attention.split(","):
            seconds = {setting: [] for setting in settings}
            outputs = {}
            for setting in settings:  # warm-up
                workers[setting[0]].ask(attention=attention, what=setting[1], precision=setting[2])
            for _ in range(args.rounds):
                for setting in settings:
                    answer = workers[setting[0]].ask(attention=attention, what=setting[1], precision=setting[2])
                    seconds[setting].append(answer["seconds"])
                    outputs[setting] = answer
            median = {setting: statistics.median(values) for setting, values in seconds.items()}
            old, new, new_bf16 = (median[s] for s in settings[:3])
            old_bf16 = median[settings[7]]
            greedy, greedy_bf16 = median[settings[3]], median[settings[4]]
            floor, floor_bf16 = median[settings[5]] / greedy, median[settings[6]] / greedy_bf16
            search, search_bf16 = new / median[settings[5]], new_bf16 / median[settings[6]]
            base_best, best, bf16_best = (outputs[s]["best"] for s in settings[:3])
            same = sum(a == b for a, b in zip(base_best, best))
            bf16_same = sum(a == b for a, b in zip(best, bf16_best))
            score_gap = max(abs(a - b) for a, b in zip(outputs[settings[1]]["scores"], outputs[settings[2]]["scores"]))
            # Every row of a source feeds back its own argmax from the same start: the steps must find greedy's tokens.
            greedy_best = outputs[settings[3]]["best"]
            steps_best = outputs[settings[5]]["best"]
            steps_agree = sum(row == greedy_best[index // BEAM] for index, row in enumerate(steps_best))
            failed |= same != len(best) or steps_agree != len(steps_best)
            print(f"| {attention} | {new:.3f} s / {old:.3f} s = **{old / new:.2f}x faster** | "
                  f"{new_bf16:.3f} s: **{old / new_bf16:.2f}x faster** | "
                  f"{new_bf16:.3f} s / {old_bf16:.3f} s = **{old_bf16 / new_bf16:.2f}x faster** | "
                  f"{new / greedy:.2f} ({greedy:.3f} s) | "
                  f"{new_bf16 / greedy_bf16:.2f} ({greedy_bf16:.3f} s) | {floor:.2f}, {floor_bf16:.2f} | "
                  f"{search:.2f}, {search_bf16:.2f} | {same} of {len(best)} | "
                  f"same best {bf16_same} of {len(best)}, score |diff| {score_gap:.1e} |")
            report[attention] = {
                "seconds_median": {" ".join(s): median[s] for s in settings},
                "seconds_all": {" ".join(s): seconds[s] for s in settings},
                "speedup_fp32": old / new, "speedup_bf16_vs_baseline_fp32": old / new_bf16,
                "speedup_bf16": old_bf16 / new_bf16,
                "beam_over_greedy_fp32": new / greedy, "beam_over_greedy_bf16": new_bf16 / greedy_bf16,
                "steps_over_greedy_fp32": floor, "steps_over_greedy_bf16": floor_bf16,
                "beam_over_steps_fp32": search, "beam_over_steps_bf16": search_bf16,
                "steps_rows_equal_to_greedy_fp32": steps_agree,
                "same_best_fp32_vs_baseline": same, "same_best_bf16_vs_fp32": bf16_same,
                "bf16_score_max_abs_difference": score_gap,
            }
        for process in workers.values():
            process.close()
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    if failed:
        print("\nFAILED: today's fp32 beam search finds other best hypotheses than the baseline's, or the steps of the "
              "floor other tokens than greedy decoding")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
