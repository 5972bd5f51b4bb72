"""Options and output shared by several commands."""

from __future__ import annotations

import argparse


def add_decode_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beam", type=int, default=None, metavar="K",
                        help="beam width (default: the run's, greedy = 1)")
    parser.add_argument("--nbest", type=int, default=None, metavar="N", help="keep the N best hypotheses (N <= beam)")
    parser.add_argument("--length-penalty", dest="length_penalty", type=float, default=None, metavar="ALPHA",
                        help="rank hypotheses by score / length^ALPHA")
    parser.add_argument("--constrained", action=argparse.BooleanOptionalAction, default=None,
                        help="only decode tokens that can still complete a well-formed expression")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                        help="answer with the first n-best hypothesis the task's verifier accepts (default on)")

