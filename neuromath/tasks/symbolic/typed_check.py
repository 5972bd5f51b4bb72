"""``neuromath check integral`` and ``neuromath check ode``: a problem and an answer typed in ordinary notation
(``x*cos(x)``, ``x*sin(x) + cos(x)``, ``Y' - Y = 0``, ``c*exp(x)``), read without ``eval`` by the typed-input reader
(``neuromath.expr.ordinary``, with the constant-size guard of ``typed_problems``), and checked by the task's
verifier (``verify.check_explained``, in a worker process with a time limit). The verdict is in the three words users
see (``verify.user_verdict``): ``verified`` only when SymPy proves the answer right; ``not verified`` when it is
wrong, not proven, or the time limit ended the check; ``unknown`` when the check could not run.
"""

from __future__ import annotations

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.ordinary import parse_ordinary, parse_ordinary_equation
from neuromath.expr.symbolic_prefix import CONSTANT, CONSTANTS, FUNCTION_LEAVES, VARIABLE, PrefixNode, node_tokens
from neuromath.tasks.symbolic.typed_problems import MAX_PROBLEM_TOKENS, check_constants
from neuromath.tasks.symbolic.verify import DEFAULT_TIME_LIMIT, check_with_time_limit, user_verdict

ANSWER_NAMES = (VARIABLE, CONSTANT) + CONSTANTS  # x, c, pi, E, I
INTEGRAND_NAMES = (VARIABLE,) + CONSTANTS
ODE_NAMES = (VARIABLE,) + FUNCTION_LEAVES + CONSTANTS


def typed_tokens(text: str, names, what: str) -> list[str]:
    """The prefix tokens of ``text`` (an expression, or ``left = right`` read as ``left - right`` when ``equation``
    names are allowed); a NeuromathError that names ``what`` and the reason when it cannot be read."""
    try:
        if "=" in text and what == "ODE":
            left, right = parse_ordinary_equation(text, names)
            tree = PrefixNode("sub", (left, right))
        else:
            tree = parse_ordinary(text, names)
        check_constants(tree)
    except ExpressionError as error:
        raise NeuromathError(f"the {what}: {error}") from None
    tokens = node_tokens(tree)
    if len(tokens) > MAX_PROBLEM_TOKENS:
        raise NeuromathError(f"the {what} is {len(tokens)} prefix tokens long; at most {MAX_PROBLEM_TOKENS} are "
                             "checked")
    return tokens


def checked(kind: str, problem: list[str], answer: list[str], time_limit: float) -> tuple[str, str]:
    verdict, reason = check_with_time_limit(kind, problem, answer, time_limit)
    return user_verdict(verdict), reason


def check_integral_text(integrand: str, antiderivative: str,
                        time_limit: float = DEFAULT_TIME_LIMIT) -> tuple[str, str]:
    """(verdict, reason): is ``antiderivative`` (in x, maybe c) an antiderivative of ``integrand`` (in x)?"""
    problem = typed_tokens(integrand, INTEGRAND_NAMES, "integrand")
    answer = typed_tokens(antiderivative, ANSWER_NAMES, "antiderivative")
    return checked("integration", problem, answer, time_limit)


def check_ode_text(equation: str, solution: str, time_limit: float = DEFAULT_TIME_LIMIT) -> tuple[str, str]:
    """(verdict, reason): does ``solution`` (in x and the constant c) solve ``equation``, an ODE in x, Y, Y' and Y''
    written ``P = Q`` (read as P - Q = 0) or ``P`` (read as P = 0)?"""
    problem = typed_tokens(equation, ODE_NAMES, "ODE")
    if not any(token in FUNCTION_LEAVES for token in problem):
        raise NeuromathError(f"the ODE {equation!r} does not use Y, Y' or Y''; write it in x, Y and Y', e.g. "
                             "\"Y' - Y = 0\"")
    answer = typed_tokens(solution, ANSWER_NAMES, "solution")
    return checked("ode1", problem, answer, time_limit)
