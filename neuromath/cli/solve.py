"""neuromath solve: solve one problem with a trained run: a word problem (the equation and its value), an integrand or
ODE in ordinary notation (the answer with its verification), a Mathematics Dataset question (the answer), or an
equation to verify (the model's verdict and probability beside a numeric check); and the n-best list. With
``--attention FILE.png`` it draws the weights of every attention layer and head for this input
(``neuromath.evaluation.attention_maps``); with ``--json`` too, the JSON holds them.

Exit status: 0 with an answer; 1 when the model's equation has none, with the reason (no well-formed equation,
division by zero, a value too large); 2 for bad input (a text without numbers, a number too large to read).
"""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import add_cost_limits, add_decode_options, add_json_option, cost_limits_of, documented


def command_solve(args: argparse.Namespace) -> int:
    from neuromath.api import DECODE_OPTIONS, LoadedClassifier, decode_options, json_safe, load  # torch: here only
    from neuromath.api.sequence_solver import verdict_mark

    with cost_limits_of(args):  # --max-memory, --max-decode-len: checked before the model is built
        solver = load(args.run_dir, **decode_options({name: getattr(args, name) for name in DECODE_OPTIONS}))
    solution = solver.solve(args.text, attention=args.attention is not None)
    if args.attention is not None:
        from neuromath.evaluation.attention_maps import plot_attention

        plot_attention(solution.attention, args.attention, title=args.text)
        if not args.json:
            print(f"attention of {len(solution.attention)} layers drawn in {args.attention}")
    if args.json:  # the object neuromath serve answers too (Solution.to_json, Verdict.to_json)
        print(json.dumps(json_safe(solution.to_json()), ensure_ascii=False, allow_nan=False))
        return 0 if isinstance(solver, LoadedClassifier) or not solution.reason else 1
    if isinstance(solver, LoadedClassifier):  # an equation classifier: a verdict, not an answer
        print(solution)
        print_unknown(solution.unknown_tokens)
        return 0
    for rank, candidate in enumerate(solution.nbest, start=1):
        # word problems: the verifier checks the equation's form, which the entry shows; else the verdict, with the
        # verifier's own where it says more
        mark = "" if candidate.verified is None or solver.task.answer_text is None else verdict_mark(candidate)
        print(f"{rank:>3}. {shown_candidate(candidate):<40} score {candidate.score:8.4f}{mark}")
    if solution.nbest:
        print()
    print_unknown(solution.unknown_tokens)
    if solution.reason:
        print(solution)  # no answer: the reason, and the equation or the model's output
        return 1
    if solution.equation:
        print(f"equation: {solution.equation}")
        print(f"answer: {solution.answer_text}")
    else:
        print(f"answer: {solution}")
    return 0


def shown_candidate(candidate) -> str:
    """An n-best entry as the list prints it: the equation and its value, the answer, or, for tokens that are no
    well-formed equation, a label with the tokens, never an empty line."""
    if candidate.well_formed is False:
        return f"(not a well-formed equation: {' '.join(candidate.tokens) or 'no tokens'})"
    if candidate.equation:
        return f"{candidate.equation} = {candidate.answer_text}" if candidate.answer_text else \
            f"{candidate.equation} (no value)"
    return candidate.answer_text or " ".join(candidate.tokens) or "(empty)"


def print_unknown(tokens) -> None:
    if tokens:
        print(f"note: unknown to the run's vocabulary (read as <unk>): {' '.join(tokens)}")


def register(commands) -> None:
    solve = commands.add_parser(
        "solve", help="solve one problem with a trained run: a word problem, an integral or ODE, a question, or an "
                      "equation to verify",
        **documented(
            "Solve one problem with a trained run; what TEXT is depends on the run's task: a word problem (prints "
            "the equation and its value), an integrand or first-order ODE in ordinary notation (the answer with the "
            "verifier's verdict), a Mathematics Dataset question (the answer), or an equation to verify (the "
            "model's verdict and probability beside a numeric check). --nbest N lists the N best hypotheses, and "
            "--attention FILE.png draws every attention layer and head for this input. Exit status: 0 with an "
            "answer, 1 when the model's equation has none (the reason is printed), 2 for bad input.",
            'neuromath solve runs/g2t "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry '
            'have left?"',
            'neuromath solve runs/int "x*cos(x)" --beam 10 --nbest 5',
            'neuromath solve runs/verify "sin(x)^2 + cos(x)^2 = 1" --json',
            'neuromath solve my-org/graph2tree-mawps "Tom has 5 apples. He buys 3 more. How many apples does he '
            'have?"   # a model on the hub',
        ),
    )
    solve.add_argument("run_dir", metavar="RUN_DIR",
                       help="a trained run folder (written by neuromath train or demo, or a fold of cv), an exported "
                            "folder, or a model on the Hugging Face Hub by id: org/name or org/name@revision "
                            "(downloaded once into the Hugging Face cache; the 'hub' extra)")
    solve.add_argument("text", metavar="TEXT", help="the problem, quoted as one argument")
    add_json_option(solve, "one JSON object: the answer that neuromath serve's POST /api/solve gives")
    solve.add_argument("--attention", metavar="FILE.png", default=None,
                       help="draw every attention layer's weights for this input (one panel per head)")
    add_decode_options(solve)
    add_cost_limits(solve)
    solve.set_defaults(handler=command_solve)
