"""neuromath check: is an answer right? An antiderivative (``check integral F G``), a solution of an ODE (``check ode
ODE Y``) or an identity (``check identity "LHS = RHS"``), typed in ordinary notation and read without ``eval``. The
verdict is ``verified`` only when it is shown exactly (SymPy reduces the difference to 0; exact arithmetic for an
identity); ``not verified`` when it is wrong, not proven, or the time limit ended the check; ``unknown`` when nothing
decides. ``--json`` prints ``{"verdict": ..., "reason": ...}``.

Exit status: 0 when verified (true), 1 when not verified or unknown, 2 for input that cannot be read.
"""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import add_json_option, documented, float_in
from neuromath.tasks.identities.exact_check import VERIFIED, check_identity_text
from neuromath.tasks.symbolic.typed_check import check_integral_text, check_ode_text
from neuromath.tasks.symbolic.verify import DEFAULT_TIME_LIMIT

MAX_CHECK_TIME_LIMIT = 600.0  # seconds; the default is the verifier's own (5 s), as evaluate uses


def command_check(args: argparse.Namespace) -> int:
    if args.kind == "integral":
        verdict, reason = check_integral_text(args.problem, args.answer, args.time_limit)
    elif args.kind == "ode":
        verdict, reason = check_ode_text(args.problem, args.answer, args.time_limit)
    else:
        verdict, reason = check_identity_text(args.equation, args.time_limit)
    if args.json:
        print(json.dumps({"verdict": verdict, "reason": reason}, ensure_ascii=False))
    else:
        print(verdict)
        print(f"reason: {reason}")
    return 0 if verdict == VERIFIED else 1


def add_common(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser, 'one JSON object: {"verdict": "verified" | "not verified" | "unknown", "reason": "..."}')
    parser.add_argument("--time-limit", dest="time_limit", default=DEFAULT_TIME_LIMIT,
                        type=float_in(0.0, MAX_CHECK_TIME_LIMIT, low_open=True),
                        help=f"seconds the check may take (default {DEFAULT_TIME_LIMIT:g}, at most "
                             f"{MAX_CHECK_TIME_LIMIT:g}); a check it ends is not verified")
    parser.set_defaults(handler=command_check)


NOTATION = ("Ordinary notation: + - * / ^ (or **), brackets, numbers such as 3, 0.25 or 10^-10, the functions "
            "sqrt exp ln (log) sin cos tan and their inverse and hyperbolic kinds, pi and e.")


def register(commands) -> None:
    check = commands.add_parser(
        "check", help="check an antiderivative, an ODE solution or an identity exactly (verified, not verified, "
                      "unknown)",
        **documented(
            "Check an answer without a model: an antiderivative (integral), a solution of a first-order ODE (ode), "
            "or an identity (identity), typed in ordinary notation. It prints the verdict and the reason: "
            "'verified' only when the answer is shown right exactly (SymPy reduces the difference to 0, or exact "
            "arithmetic decides); 'not verified' when it is wrong, when nothing proves it (sampled numbers never "
            "accept an answer), or when the time limit ends the check; 'unknown' when nothing decides.\n\n"
            "Exit status: 0 when verified, 1 when not verified or unknown, 2 when the input cannot be read.",
            'neuromath check integral "x*cos(x)" "x*sin(x) + cos(x) + 5"',
            "neuromath check ode \"Y' - Y = 0\" \"c*exp(x)\" --json",
            'neuromath check identity "sin(x)^2 + cos(x)^2 = 1"',
        ),
    )
    kinds = check.add_subparsers(dest="kind", required=True, metavar="KIND",
                                 help="integral, ode or identity")
    integral = kinds.add_parser(
        "integral", help="is G an antiderivative of F?",
        **documented(
            "Is G an antiderivative of F, that is, is dG/dx equal to F? F is in x; G is in x and may hold a constant "
            "c. Verified only when SymPy reduces dG/dx - F to 0. " + NOTATION,
            'neuromath check integral "x" "x^2/2"',
            'neuromath check integral "2*x/(1 + x^2)" "log(1 + x^2)" --json',
        ),
    )
    integral.add_argument("problem", metavar="F", help="the integrand, in x")
    integral.add_argument("answer", metavar="G", help="the antiderivative to check, in x (and c)")
    add_common(integral)
    ode = kinds.add_parser(
        "ode", help="does Y solve the ODE?",
        **documented(
            "Does Y solve the ODE? The ODE is written in x, Y, Y' (and Y''): \"Y' - Y = 0\", or \"Y' - Y\" for the "
            "same equation = 0. Y is in x and the constant c. Verified only when SymPy reduces the ODE, with Y and "
            "its derivatives substituted, to 0. " + NOTATION,
            "neuromath check ode \"Y' - Y = 0\" \"c*exp(x)\"",
            "neuromath check ode \"x*Y' - Y\" \"c*x\" --json",
        ),
    )
    ode.add_argument("problem", metavar="ODE", help="the equation in x, Y, Y' and Y''")
    ode.add_argument("answer", metavar="Y", help="the solution to check, in x (and c)")
    add_common(ode)
    identity = kinds.add_parser(
        "identity", help="is LHS = RHS true for every value of its variables?",
        **documented(
            "Is the equation LHS = RHS an identity, true wherever both sides are defined? True (verified) only when "
            "exact arithmetic or a proof shows it; false (not verified) when a point shows the sides differ; "
            "unknown otherwise. " + NOTATION,
            'neuromath check identity "sin(x)^2 + cos(x)^2 = 1"',
            'neuromath check identity "x + 10^(-9) = x" --json',
        ),
    )
    identity.add_argument("equation", metavar='"LHS = RHS"', help="the equation, quoted as one argument")
    add_common(identity)
