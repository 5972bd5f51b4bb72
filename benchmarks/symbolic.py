"""Symbolic-task benchmark: verification throughput (numeric-first against simplify-only) and generation rates.

Usage: ``python benchmarks/symbolic.py [--quick] [--antiderivatives N] [--time-limit S] [--generate N]
[--max-ops K] [--skip-generation] [--json FILE] [--seed S]``

A script, not a test: it prints numbers and a target with PASS / FAIL, and always exits 0.

1. Verification (``neuromath.tasks.symbolic.verify``). Random antiderivatives F (SymPy expressions of 1 to
   --max-ops operators, drawn uniformly, over x, small integers and sin cos tan exp log sqrt atan sinh cosh) give
   integrands f = F'. Each F gives five hypotheses: three right (F, F + 3, and F rewritten by expand / together /
   expand_trig / factor, or F + sin(x)**2 + cos(x)**2 - 1 when none of them changes it) and two wrong (2 F and
   F + x). The same list is verified twice in the same run, one worker each: numeric-first (random points, simplify
   only when they are inconclusive) and simplify-only (simplify(F' - f) == 0, the check of Lample & Charton).
   Printed: hypotheses per second of each, their ratio (target: numeric-first at least 5x faster), how often the two
   verdicts agree (a hypothesis that timed out in either arm is listed apart, not counted), and each arm's accuracy
   against the labels of the construction. Each arm starts its own worker, warmed up before the clock starts.
2. Generation (``neuromath.tasks.symbolic.symbolic_generator.generate_with_counts``, one worker): for each method
   (backward, forward, parts, ode1) kept pairs per second (the worker's start-up included) and kept / tried, with
   the time-outs and the most frequent reasons for rejection.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy
import sympy

from neuromath.errors import ExpressionError
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol, sympy_to_prefix
from neuromath.fileio import write_text_atomic
from neuromath.tasks.symbolic import METHODS, SymbolicExample
from neuromath.tasks.symbolic import verify as symbolic_verify

SPEEDUP_TARGET = 5.0
MAX_INTEGRAND_TOKENS = 120
X = symbol("x")
UNARY_FUNCTIONS = (
    sympy.sin, sympy.cos, sympy.tan, sympy.exp, sympy.log, sympy.sqrt, sympy.atan, sympy.sinh, sympy.cosh,
)
BINARY_OPERATORS = ("add", "sub", "mul", "div")
INTEGERS = (-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)
REWRITES = (sympy.expand, sympy.together, sympy.expand_trig, sympy.factor)


# --------------------------------------------------------------------------------------- the hypotheses


def random_expression(rng: random.Random, n_ops: int):
    """A random SymPy expression with ``n_ops`` operators: a unary function (40%) or a binary operator."""
    if n_ops == 0:
        return X if rng.random() < 0.6 else sympy.Integer(rng.choice(INTEGERS))
    if rng.random() < 0.4:
        return rng.choice(UNARY_FUNCTIONS)(random_expression(rng, n_ops - 1))
    left_ops = rng.randint(0, n_ops - 1)
    left, right = random_expression(rng, left_ops), random_expression(rng, n_ops - 1 - left_ops)
    operator = rng.choice(BINARY_OPERATORS)
    if operator == "add":
        return left + right
    if operator == "sub":
        return left - right
    if operator == "mul":
        return left * right
    return left / right


def writable(expression) -> list[str] | None:
    """Prefix tokens of an expression that the verifier can read back, or None (I, zoo, special functions)."""
    if expression.has(sympy.I, sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    try:
        tokens = sympy_to_prefix(expression)
        prefix_to_sympy(tokens)
    except ExpressionError:
        return None
    return tokens


def rewritten(antiderivative):
    """An equivalent form of F with different tokens."""
    original = sympy_to_prefix(antiderivative)
    for rewrite in REWRITES:
        candidate = rewrite(antiderivative)
        tokens = writable(candidate)
        if tokens is not None and tokens != original:
            return candidate
    return antiderivative + sympy.sin(X) ** 2 + sympy.cos(X) ** 2 - 1


def make_hypotheses(n_antiderivatives: int, max_ops: int, rng: random.Random) -> list[dict]:
    """Five hypotheses (tokens, example, label, variant) per random antiderivative of 1..max_ops operators; see the
    module docstring."""
    hypotheses: list[dict] = []
    made = 0
    while made < n_antiderivatives:
        antiderivative = random_expression(rng, rng.randint(1, max_ops))
        if not antiderivative.has(X):
            continue
        integrand = sympy.diff(antiderivative, X)
        integrand_tokens, antiderivative_tokens = writable(integrand), writable(antiderivative)
        if integrand == 0 or integrand_tokens is None or antiderivative_tokens is None:
            continue
        if len(integrand_tokens) > MAX_INTEGRAND_TOKENS:
            continue
        variants = [
            ("F", antiderivative, True),
            ("F + 3", antiderivative + 3, True),
            ("rewritten", rewritten(antiderivative), True),
            ("2 F", 2 * antiderivative, False),
            ("F + x", antiderivative + X, False),
        ]
        written = [(name, writable(expression), label) for name, expression, label in variants]
        if any(tokens is None for _, tokens, _ in written):
            continue
        example = SymbolicExample(tuple(integrand_tokens), tuple(antiderivative_tokens), method="benchmark",
                                  id=f"benchmark#{made}")
        hypotheses += [{"tokens": tokens, "example": example, "label": label, "variant": name}
                       for name, tokens, label in written]
        made += 1
    return hypotheses


# ---------------------------------------------------------------------------------------- verification


def run_arm(hypotheses: list[dict], mode: str, time_limit: float) -> tuple[list[str], float]:
    """The verdicts of one mode in a fresh one-worker pool, and the seconds they took (start-up excluded)."""
    symbolic_verify.close_pools()
    warm_up = SymbolicExample(tuple(sympy_to_prefix(sympy.sin(2 * X))), ())
    symbolic_verify.verdicts([(sympy_to_prefix(sympy.sin(X) ** 2), warm_up)], workers=1, time_limit=time_limit,
                             mode="simplify_only")  # the worker is up and simplify's lazy imports are done
    pairs = [(h["tokens"], h["example"]) for h in hypotheses]
    started = time.perf_counter()
    verdicts = symbolic_verify.verdicts(pairs, workers=1, time_limit=time_limit, mode=mode)
    seconds = time.perf_counter() - started
    symbolic_verify.close_pools()
    return verdicts, seconds


def describe(hypothesis: dict) -> str:
    return (f"{hypothesis['variant']}: {prefix_to_sympy(hypothesis['tokens'])} "
            f"for {prefix_to_sympy(hypothesis['example'].source)}")


def measure_verification(hypotheses: list[dict], time_limit: float) -> dict:
    arms = {}
    for mode in ("numeric_first", "simplify_only"):
        verdicts, seconds = run_arm(hypotheses, mode, time_limit)
        right = [verdict == "correct" for verdict in verdicts]
        arms[mode] = {
            "seconds": seconds,
            "hypotheses_per_second": len(hypotheses) / seconds,
            "verdicts": dict(Counter(verdicts)),
            "agree_with_labels": sum(r == h["label"] for r, h in zip(right, hypotheses)),
            "all_verdicts": verdicts,
        }
    numeric, simplified = arms["numeric_first"]["all_verdicts"], arms["simplify_only"]["all_verdicts"]
    agreements, disagreements, timeouts = 0, [], {"numeric_first": [], "simplify_only": []}
    for hypothesis, a, b in zip(hypotheses, numeric, simplified):
        if a == "timeout" or b == "timeout":
            for mode, verdict in (("numeric_first", a), ("simplify_only", b)):
                if verdict == "timeout":
                    timeouts[mode].append(describe(hypothesis))
            continue
        if (a == "correct") == (b == "correct"):
            agreements += 1
        else:
            disagreements.append(f"{describe(hypothesis)} -> numeric-first {a}, simplify-only {b}")
    for arm in arms.values():
        del arm["all_verdicts"]
    ratio = arms["numeric_first"]["hypotheses_per_second"] / arms["simplify_only"]["hypotheses_per_second"]
    return {
        "hypotheses": len(hypotheses),
        "arms": arms,
        "speedup": ratio,
        "compared": agreements + len(disagreements),
        "agreements": agreements,
        "disagreements": disagreements,
        "timeouts": timeouts,
    }


def print_verification(result: dict, time_limit: float) -> None:
    n = result["hypotheses"]
    print(f"## Verification: {n} hypotheses ({n // 5} antiderivatives x 5), one worker, {time_limit:g} s limit each")
    print()
    print("| mode | seconds | hypotheses / s | verdicts | agree with labels |")
    print("| --- | ---: | ---: | --- | ---: |")
    for mode, arm in result["arms"].items():
        counts = ", ".join(f"{verdict} {count}" for verdict, count in sorted(arm["verdicts"].items()))
        print(f"| {mode} | {arm['seconds']:.2f} | {arm['hypotheses_per_second']:.1f} | {counts} "
              f"| {arm['agree_with_labels']}/{n} |")
    print()
    print(f"verdicts agree on {result['agreements']}/{result['compared']} hypotheses "
          f"({len(result['disagreements'])} disagreements; timeouts listed apart)")
    for line in result["disagreements"][:10]:
        print(f"  disagreement: {line}")
    for mode, lines in result["timeouts"].items():
        print(f"timeouts in {mode}: {len(lines)}")
        for line in lines[:10]:
            print(f"  {line}")
    print()


# ------------------------------------------------------------------------------------------ generation


def measure_generation(n: int, seed: int, max_ops: int) -> dict | str:
    """Per method: kept pairs per second and kept / tried; a message instead when the generator is missing."""
    try:
        from neuromath.tasks.symbolic.symbolic_generator import generate_with_counts
    except ImportError as error:
        return f"neuromath.tasks.symbolic.symbolic_generator cannot be imported ({error}); generation not measured"
    rows = {}
    for method in METHODS:
        started = time.perf_counter()
        examples, counts = generate_with_counts(n, seed, method=method, max_ops=max_ops, workers=1, progress=False)
        seconds = time.perf_counter() - started
        rejected = dict(sorted(counts.rejected.items(), key=lambda item: -item[1]))
        rows[method] = {
            "kept": counts.kept, "tried": counts.tried, "timed_out": counts.timed_out, "rejected": rejected,
            "seconds": seconds, "kept_per_second": counts.kept / seconds,
            "kept_per_tried": counts.kept / counts.tried if counts.tried else 0.0,
        }
    return rows


def print_generation(rows: dict | str, n: int, max_ops: int) -> None:
    print(f"## Generation: {n} pairs per method, max_ops {max_ops}, one worker (start-up included)")
    print()
    if isinstance(rows, str):
        print(f"SKIPPED: {rows}")
        print()
        return
    print("| method | kept | tried | kept / tried | timed out | seconds | kept / s | most rejected |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for method, row in rows.items():
        reasons = ", ".join(f"{reason} {count}" for reason, count in list(row["rejected"].items())[:3]) or "-"
        print(f"| {method} | {row['kept']} | {row['tried']} | {row['kept_per_tried']:.2f} | {row['timed_out']} "
              f"| {row['seconds']:.1f} | {row['kept_per_second']:.2f} | {reasons} |")
    print()


# ---------------------------------------------------------------------------------------------- main


def pass_fail(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 antiderivatives, 3 pairs per method: a smoke run")
    parser.add_argument("--antiderivatives", type=int, default=None, help="random antiderivatives (default 30)")
    parser.add_argument("--time-limit", type=float, default=symbolic_verify.DEFAULT_TIME_LIMIT,
                        help="seconds per verified hypothesis")
    parser.add_argument("--generate", type=int, default=None, help="pairs generated per method (default 20)")
    parser.add_argument("--max-ops", type=int, default=6,
                        help="most operators of the antiderivatives and of the generated expressions")
    parser.add_argument("--skip-generation", action="store_true", help="measure verification only")
    parser.add_argument("--json", type=Path, default=None, help="also write every measurement to this JSON file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random antiderivatives and the generator")
    args = parser.parse_args(argv)
    if args.antiderivatives is None:
        args.antiderivatives = 8 if args.quick else 30
    if args.generate is None:
        args.generate = 3 if args.quick else 20
    if args.antiderivatives < 1 or args.generate < 1 or args.max_ops < 1 or not args.time_limit > 0:
        parser.error("--antiderivatives, --generate, --max-ops and --time-limit must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    environment = {
        "python": sys.version.split()[0], "sympy": sympy.__version__, "numpy": numpy.__version__,
        "cpu_count": os.cpu_count(), "machine": f"{platform.machine()} {platform.system()}",
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    print(f"python {environment['python']} | sympy {environment['sympy']} | numpy {environment['numpy']} "
          f"| CPUs {environment['cpu_count']} | load average {environment['load_average']}"
          + (" | QUICK (smoke run, numbers are rough)" if args.quick else ""))
    print()

    hypotheses = make_hypotheses(args.antiderivatives, args.max_ops, random.Random(args.seed))
    verification = measure_verification(hypotheses, args.time_limit)
    print_verification(verification, args.time_limit)

    generation: dict | str = "skipped (--skip-generation)"
    if not args.skip_generation:
        generation = measure_generation(args.generate, args.seed, args.max_ops)
        print_generation(generation, args.generate, args.max_ops)

    speedup = verification["speedup"]
    targets = {"verification_speedup": {"value": speedup, "target": f">= {SPEEDUP_TARGET}x",
                                        "pass": speedup >= SPEEDUP_TARGET}}
    print("## Targets")
    print()
    print(f"- {pass_fail(speedup >= SPEEDUP_TARGET)}: numeric-first verification {speedup:.1f}x the hypotheses per "
          f"second of simplify-only (target >= {SPEEDUP_TARGET:g}x); verdicts agree on "
          f"{verification['agreements']}/{verification['compared']}")
    if args.quick:
        print("  (quick run: few hypotheses, so the ratio is indicative only)")
    elapsed = time.perf_counter() - started
    print(f"\nbenchmark took {elapsed:.1f} s")

    if args.json is not None:
        payload = {
            "environment": environment,
            "settings": {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()},
            "verification": verification,
            "generation": generation,
            "targets": targets,
            "seconds": elapsed,
        }
        write_text_atomic(args.json, json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
