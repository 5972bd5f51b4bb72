"""neuromath solve: solve one problem with a trained run, printing the equation and its answer (and the n-best list).

Exit status: 0 with an answer; 1 when the model's equation has none, with the reason (no well-formed equation,
division by zero, a value too large); 2 for bad input (a text without numbers, a number too large to read).
"""

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
            "reason": solution.reason,
            "nbest": [
                {"tokens": list(c.tokens), "equation": c.equation, "answer_text": c.answer_text, "score": c.score,
                 "verified": c.verified}
                for c in solution.nbest
            ],
        }, ensure_ascii=False))
        return 1 if solution.reason else 0
    for rank, candidate in enumerate(solution.nbest, start=1):
        if candidate.equation:
            shown = f"{candidate.equation} = {candidate.answer_text}"
        else:
            shown = " ".join(candidate.tokens) or "(empty)"
        mark = "" if candidate.verified is None else "" if candidate.verified else "  (not well-formed)"
        print(f"{rank:>3}. {shown:<40} score {candidate.score:8.4f}{mark}")
    if solution.nbest:
        print()
    if solution.reason:
        print(solution)  # no answer: the reason, and the equation or the model's output
        return 1
    print(f"equation: {solution.equation}")
    print(f"answer: {solution.answer_text}")
    return 0


def register(commands) -> None:
    solve = commands.add_parser("solve", help="solve one word problem with a trained run")
    solve.add_argument("run_dir")
    solve.add_argument("text")
    solve.add_argument("--json", action="store_true")
    add_decode_options(solve)
    solve.set_defaults(handler=command_solve)
