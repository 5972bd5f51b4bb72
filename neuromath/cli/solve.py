"""neuromath solve: solve one problem with a trained run, printing the equation and its answer (and the n-best list)."""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import add_decode_options


def command_solve(args: argparse.Namespace) -> int:
    from neuromath.api import DECODE_OPTIONS, Solver, decode_options  # torch: loaded only by the commands that use it

    solver = Solver(args.run_dir, **decode_options({name: getattr(args, name) for name in DECODE_OPTIONS}))
    solution = solver.solve(args.text)
    if args.json:
        print(json.dumps({
            "text": solution.text,
            "equation": solution.equation,
            "answer": solution.answer,
            "answer_text": solution.answer_text,
            "masked_equation": list(solution.masked_equation),
            "nbest": [
                {"tokens": list(c.tokens), "equation": c.equation, "answer_text": c.answer_text, "score": c.score,
                 "verified": c.verified}
                for c in solution.nbest
            ],
        }, ensure_ascii=False))
        return 0
    for rank, candidate in enumerate(solution.nbest, start=1):
        if candidate.equation:
            shown = f"{candidate.equation} = {candidate.answer_text}"
        else:
            shown = " ".join(candidate.tokens) or "(empty)"
        mark = "" if candidate.verified is None else "" if candidate.verified else "  (not well-formed)"
        print(f"{rank:>3}. {shown:<40} score {candidate.score:8.4f}{mark}")
    if solution.nbest:
        print()
    if solution.equation:
        print(f"equation: {solution.equation}")
        print(f"answer: {solution.answer_text}")
    else:
        print(f"no well-formed equation (model output: {' '.join(solution.masked_equation) or 'empty'})")
        return 1
    return 0


def register(commands) -> None:
    solve = commands.add_parser("solve", help="solve one word problem with a trained run")
    solve.add_argument("run_dir")
    solve.add_argument("text")
    solve.add_argument("--json", action="store_true")
    add_decode_options(solve)
    solve.set_defaults(handler=command_solve)
