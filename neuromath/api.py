"""Using a trained run from Python: ``neuromath.load(run_dir)`` (a run folder, or a folder written by ``neuromath
export``) gives a ``Solver`` for a sequence task (``.solve(text)``, ``.solve_many(texts)``,
``.predict_nbest(examples)``, ``.with_decode(beam=...)``) or a ``LoadedClassifier`` for an equation task
(``.solve(text)``, ``.logits(examples)``). ``Solution.to_json()`` and ``Verdict.to_json()`` are the objects
``neuromath solve --json`` prints and ``neuromath serve`` answers."""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from neuromath.config import Config, DecodeConfig, load_config
from neuromath.decoding.beam import beam_search
from neuromath.decoding.constraints import GrammarConstraint
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError, NeuromathError
from neuromath.expr.tree import preorder
from neuromath.models import build_task_model
from neuromath.models.batching import EncodedExamples, carried, collate, move_batch
from neuromath.models.classifiers import (
    CompletionScorer,
    build_classifier,
    model_token,
    predict_logits,
    reads_numbers,
)
from neuromath.models.contracts import SequenceModel
from neuromath.models.weights import (
    EXPORTED_WEIGHTS,
    RUN_WEIGHTS,
    has_weights,
    load_run_weights,
    weights_file,
)
from neuromath.nn.precision import autocast, resolve_precision
from neuromath.nn.recording import recording
from neuromath.tasks import EquationTask, SequenceTask, get_task
from neuromath.tasks.identities import EquationExample, EquationNode
from neuromath.text import Vocabulary


@dataclass(frozen=True)
class Candidate:
    """One entry of an n-best list: the model's tokens, their score and whether the task's verifier accepts them."""

    tokens: tuple[str, ...]
    score: float  # length-normalised log-probability (beam search's ranking score)
    verified: bool | None  # None when the task has no verifier
    equation: str = ""  # filled in by solve: the equation over the problem's own numbers, if well-formed
    answer_text: str = ""  # filled in by solve: its value
    # the verifier's verdict by name where the task names its verdicts (symbolic: correct, wrong, unparsable, invalid,
    # undecided, timeout, error; ``verified`` is then ``verdict == "correct"``); None: a yes / no verifier or none
    verdict: str | None = None

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "equation": self.equation, "answer_text": self.answer_text,
                "score": finite_or_none(self.score), "verified": self.verified, "verdict": self.verdict}


def finite_or_none(value: float | None) -> float | None:
    """A number for JSON: None in place of inf and nan, which JSON has no words for."""
    return value if value is None or math.isfinite(value) else None


def json_safe(value):
    """``value`` with every non-finite float (NaN, inf, -inf, which strict JSON has no words for) replaced by None,
    in dicts, lists and tuples at any depth; the convention of ``finite_or_none``, so that a NaN in a run's
    summary.json or in attention weights is null in every answer of ``neuromath serve`` and ``solve --json``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


@dataclass(frozen=True, eq=False)
class AttentionMap:
    """The attention weights of one layer for one solved problem, labelled: rows are ``query_tokens``, columns
    ``key_tokens``, one matrix per head (``head_labels``)."""

    title: str  # ``encoder self-attention, layer 1``, ``cross-attention, layer 2``, ``group attention``, ...
    place: str  # encoder, decoder or cross
    head_labels: tuple[str, ...]
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    weights: np.ndarray  # (heads, queries, keys) float32; a row sums to 1 over the keys its query may see
    roles: np.ndarray | None = None  # TP-Attention: (heads, queries, head_dim) role vector of each query

    def to_json(self, digits: int = 4) -> dict:
        return {"title": self.title, "place": self.place, "heads": list(self.head_labels),
                "queries": list(self.query_tokens), "keys": list(self.key_tokens),
                "weights": np.round(self.weights.astype(float), digits).tolist()}


@dataclass(frozen=True)
class Solution:
    """What ``solve`` returns: the equation with the problem's own numbers and its value, or the reason there is
    no answer."""

    text: str
    equation: str  # e.g. "135 - 19"; empty when the model produced no well-formed equation
    answer: float | None  # None when there is no answer or it is beyond the range of a float (answer_text has it)
    answer_text: str  # exact form: "116", "2.5", "(7/3)"; empty when there is no answer
    masked_equation: tuple[str, ...]  # the model's prefix tokens over n0, n1, ...
    nbest: tuple[Candidate, ...] = ()  # the beam's n-best list, best first, when nbest > 1
    reason: str = ""  # why there is no answer ("division by zero", "no well-formed equation: ..."); empty otherwise
    verified: bool | None = None  # the task's verifier on the answer (symbolic: it differentiates back); None: none
    unknown_tokens: tuple[str, ...] = ()  # input tokens the run's vocabulary does not hold (read as <unk>)
    attention: tuple[AttentionMap, ...] | None = None  # with solve(..., attention=True): every layer's weights
    verdict: str | None = None  # the verifier's verdict on the answer by name (``Candidate.verdict``): "timeout", ...

    def to_json(self) -> dict:
        """The object ``neuromath solve --json`` prints and ``POST /api/solve`` of ``neuromath serve`` answers."""
        return {
            "text": self.text,
            "equation": self.equation,
            "answer": finite_or_none(self.answer),
            "answer_text": self.answer_text,
            "masked_equation": list(self.masked_equation),
            "reason": self.reason,
            "verified": self.verified,
            "verdict": self.verdict,
            "unknown_tokens": list(self.unknown_tokens),
            "nbest": [candidate.to_json() for candidate in self.nbest],
            **({"attention": [m.to_json() for m in self.attention]} if self.attention else {}),
        }

    def __str__(self) -> str:
        if self.reason:
            shown = self.equation or f"model output {' '.join(self.masked_equation) or '(empty)'}"
            return f"no answer: {self.reason} ({shown})"
        verdict = ("" if self.verified is None else "  [verified]" if self.verified
                   else "  [verification timed out]" if self.verdict == "timeout" else "  [not verified]")
        return (f"{self.equation} = {self.answer_text}" if self.equation else self.answer_text) + verdict


DECODE_OPTIONS = ("beam", "nbest", "length_penalty", "constrained", "verify")  # what a command line may set


def decode_options(given: dict) -> dict:
    """The decoding settings a run is loaded with, from those given on a command line (``given``; None or missing:
    the run's own): a beam width alone keeps one hypothesis; an n-best size alone decodes with a beam of that width."""
    options = {name: given[name] for name in DECODE_OPTIONS if given.get(name) is not None}
    if "beam" in options and "nbest" not in options:
        options["nbest"] = 1
    if "nbest" in options and "beam" not in options:
        options["beam"] = max(options["nbest"], 1)
    return options


def check_decode(decode: DecodeConfig, config: Config | None = None, /, **changes) -> DecodeConfig:
    """``decode`` with the decoding options ``changes`` (``DecodeConfig`` fields); an unknown option is a ConfigError,
    and so is a value out of its range or an nbest above the beam: a ``DecodeConfig`` checks itself when it is built
    (``neuromath.config.RANGES``). With the run's ``config``, the rules between the decoding and the other sections
    are checked too (``neuromath.config.CONFIG_CHECKS``: a max_len above the model's)."""
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(DecodeConfig)})
    if unknown:
        raise ConfigError(f"unknown decoding option(s): {', '.join(unknown)}")
    decode = dataclasses.replace(decode, **changes)
    if config is not None:
        dataclasses.replace(config, decode=decode)  # Config.__post_init__ checks it
    return decode


def attention_flags(attention: bool | Sequence[bool], count: int) -> list[bool]:
    """``solve_many``'s ``attention``, one flag for all texts or one per text, as one flag per text."""
    flags = [attention] * count if isinstance(attention, bool) else list(attention)
    if len(flags) != count:
        raise ValueError(f"{len(flags)} attention flags for {count} texts")
    return flags


def answer_or_raise(result):
    """The one result of a ``solve_many`` of one text: the answer, or its NeuromathError raised."""
    if isinstance(result, NeuromathError):
        raise result
    return result


class Solver:
    """A trained model with its vocabularies and task; decodes batches of examples.

    ``decode`` overrides the run's decoding settings (``DecodeConfig`` fields: beam, nbest,
    length_penalty, constrained, verify, max_len, batch_size).
    """

    def __init__(self, run_dir: str | Path, device: str = "cpu", precision: str | None = None, **decode):
        run_dir = Path(run_dir)
        if not (run_dir / "config.yaml").exists():
            raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
        weights_path = weights_file(run_dir)  # model.pt, or model.safetensors of an exported folder
        self.run_dir = run_dir
        self.config: Config = load_config(run_dir / "config.yaml")
        self.decode = check_decode(self.config.decode, self.config, **decode)
        task = get_task(self.config.data.task)
        if not isinstance(task, SequenceTask):
            raise NeuromathError(
                f"{run_dir} is a {task.name} run: use neuromath.load(run) or neuromath.api.load_classifier "
                "(or `neuromath evaluate` / `neuromath complete`), not a sequence solver"
            )
        self.task: SequenceTask = task.configured(self.config.data)  # sources read as at training (data.lowercase)
        self.source_vocab = Vocabulary.load(run_dir / "source_vocab.json")
        self.target_vocab = Vocabulary.load(run_dir / "target_vocab.json")
        self.device = torch.device(device)
        # the run's own precision unless told otherwise; resolved here so a bad one fails at load, not mid-decoding
        self.precision = resolve_precision(precision or self.config.train.precision, self.device)
        self.model: SequenceModel = build_task_model(self.config.model, self.task, self.source_vocab, self.target_vocab)
        load_run_weights(self.model, weights_path, self.device)
        self.model.to(self.device).eval()
        self.constraint = self.grammar_constraint(self.decode)

    def grammar_constraint(self, decode: DecodeConfig) -> GrammarConstraint | None:
        """The constraint of constrained decoding (``decode.constrained``), or None."""
        if not decode.constrained:
            return None
        if self.task.target_grammar is None:
            raise ConfigError(f"decode.constrained: the {self.task.name} task declares no target grammar")
        return GrammarConstraint(self.task.target_grammar.token_classes(self.target_vocab.tokens))

    def with_decode(self, **decode) -> Solver:
        """This solver with other decoding settings (``DecodeConfig`` fields, as ``load(run, beam=10, nbest=5)``
        takes them, changed from this solver's own), sharing its model, vocabularies and task: no weights are read
        again. A bad setting is a ConfigError, as at ``load``."""
        variant = copy.copy(self)
        variant.decode = check_decode(self.decode, self.config, **decode)
        variant.constraint = self.grammar_constraint(variant.decode)
        return variant

    def predict_nbest(self, examples: Sequence, batch_size: int | None = None) -> list[list[Candidate]]:
        """The n-best hypotheses (target tokens) of each example, best first, decoded in batches:
        greedy when beam and nbest are 1, else batched beam search."""
        decode = self.decode
        batch_size = batch_size or decode.batch_size
        if decode.beam > 1:  # keep batch x beam rows about as many as a greedy batch
            batch_size = max(1, batch_size // decode.beam)
        encoded = EncodedExamples(examples, self.task, self.source_vocab, self.target_vocab)
        for (source, _), example in zip(encoded.items, encoded.examples):
            if len(source) > self.config.model.max_len:
                raise NeuromathError(
                    f"example {example.id!r} has {len(source)} tokens; "
                    f"the model reads at most {self.config.model.max_len}"
                )
        results: list[list[Candidate]] = []
        for start in range(0, len(encoded), batch_size):
            batch = collate([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))])
            batch = {key: value.to(self.device) for key, value in batch.items()}
            with autocast(self.precision, self.device):
                if decode.beam == 1:
                    greedy = greedy_decode(self.model, batch, decode.max_len, constraint=self.constraint)
                    lists = [[(ids, 0.0)] for ids in greedy]
                else:
                    lists = [
                        [(h.tokens, h.normalized) for h in hypotheses]
                        for hypotheses in beam_search(
                            self.model, batch, decode.beam, decode.max_len, nbest=decode.nbest,
                            length_penalty=decode.length_penalty, constraint=self.constraint,
                        )
                    ]
            for hypotheses, example in zip(lists, encoded.examples[start : start + batch_size]):
                candidates = [
                    Candidate(tuple(self.target_vocab.decode(ids)), float(score), None) for ids, score in hypotheses
                ]
                results.append(candidates)
        return self.verify_candidates(results, encoded.examples)

    def verify_candidates(self, results: list[list[Candidate]], examples: Sequence) -> list[list[Candidate]]:
        """Mark each candidate with the task's verifier: all at once where the task verifies in batches (symbolic
        checks run in a worker pool), else one by one. Where the task names its verdicts (``verdicts_many``), each
        candidate also gets its verdict, so that a check ended by its time limit reads "timeout", not just False."""
        if self.task.verify is None:
            return results
        pairs = [
            (candidate.tokens, example) for candidates, example in zip(results, examples) for candidate in candidates
        ]
        if self.task.verdicts_many is not None:
            names = iter(self.task.verdicts_many(pairs))
            return [[dataclasses.replace(c, verified=verdict == "correct", verdict=verdict)
                     for c, verdict in zip(candidates, names)] for candidates in results]
        if self.task.verify_many is not None:
            verdicts = iter(self.task.verify_many(pairs))
        else:
            verdicts = iter(self.task.verify(tokens, example) for tokens, example in pairs)
        return [[dataclasses.replace(c, verified=bool(next(verdicts))) for c in candidates] for candidates in results]

    def choose(self, candidates: list[Candidate]) -> Candidate:
        """The answer of an n-best list: the first verified hypothesis when verification is on, else the best."""
        if self.decode.verify:
            for candidate in candidates:
                if candidate.verified:
                    return candidate
        return candidates[0]

    def predict(self, examples: Sequence, batch_size: int | None = None) -> list[list[str]]:
        """One hypothesis (target tokens) per example: the chosen entry of its n-best list."""
        return [list(self.choose(candidates).tokens) for candidates in self.predict_nbest(examples, batch_size)]

    def describe_candidate(self, candidate: Candidate, example) -> Candidate:
        record = self.task.describe(list(candidate.tokens), example)
        return dataclasses.replace(
            candidate,
            equation=record["predicted_equation"] or "",
            answer_text=record.get("predicted_answer_text") or "",
        )

    def attention_maps(self, example, tokens: Sequence[str]) -> tuple[AttentionMap, ...]:
        """The attention weights of every recorded layer (``neuromath.nn.recording``) when the model reads ``example``
        and produces ``tokens``: one teacher-forced forward pass over the answer, which computes for each position
        what step-by-step decoding computed for it. A model without attention layers (DNS) is a NeuromathError."""
        source = list(self.task.source_tokens(example))
        item = (self.source_vocab.encode(source, add_eos=True),
                self.target_vocab.encode(list(tokens), add_bos=True, add_eos=True), 0,
                *carried(example, self.task, source))
        batch = move_batch(collate([item]), self.device)
        with torch.no_grad(), autocast(self.precision, self.device), recording(self.model) as recorder:
            self.model(batch)
        if not recorder.records:
            raise NeuromathError(f"the {self.config.model.name} model of {self.run_dir} has no attention to show")
        sides = {"source": (*source, "<eos>"), "target_in": ("<bos>", *tokens), "target_out": (*tokens, "<eos>")}
        return tuple(
            AttentionMap(
                title=record.title, place=record.place, head_labels=record.head_labels,
                query_tokens=sides[record.query_side], key_tokens=sides[record.key_side],
                weights=record.weights[0].numpy(),  # (H, Tq, Tk)
                roles=record.roles[0].numpy() if record.roles is not None else None,
            )
            for record in recorder.records.values()
        )

    def solve(self, text: str, attention: bool = False) -> Solution:
        """The answer to one problem typed by a user: an equation and its value (word problems), an antiderivative or
        ODE solution in ordinary notation with the verifier's verdict (symbolic), the answer string (Mathematics
        Dataset); ``nbest`` holds the beam's list when the run decodes more than one hypothesis, and ``attention``
        every attention layer's weights for the chosen answer when asked (``attention_maps``). Text the task cannot
        read is a NeuromathError."""
        return answer_or_raise(self.solve_many([text], attention)[0])

    def solve_many(self, texts: Sequence[str],
                   attention: bool | Sequence[bool] = False) -> list[Solution | NeuromathError]:
        """``solve`` of many texts with one decoding of all of them (``predict_nbest``): each text's Solution, or the
        NeuromathError of a text that cannot be solved (the task cannot read it, it is longer than the model reads,
        its model has no attention to show) in its place, the others solved all the same. ``attention``: for all
        texts, or one flag per text."""
        if self.task.prepare is None:
            raise NeuromathError(f"solve does not apply to runs of the {self.task.name!r} task")
        wants_attention = attention_flags(attention, len(texts))
        results: list[Solution | NeuromathError | None] = [None] * len(texts)
        prepared: list[tuple[int, object]] = []  # (position in texts, example)
        for position, text in enumerate(texts):
            try:
                prepared.append((position, self.task.prepare(text)))
            except NeuromathError as error:
                results[position] = error
        for (position, example), candidates in zip(prepared, self.decode_each([example for _, example in prepared])):
            try:
                if isinstance(candidates, NeuromathError):
                    raise candidates
                results[position] = self.solution(texts[position], example, candidates, wants_attention[position])
            except NeuromathError as error:
                results[position] = error
        return results  # type: ignore[return-value]

    def decode_each(self, examples: Sequence) -> list[list[Candidate] | NeuromathError]:
        """``predict_nbest`` of all examples at once; when that fails (an example longer than the model reads), of
        each one alone, so that only the examples that fail get their NeuromathError."""
        if not examples:
            return []
        try:
            return list(self.predict_nbest(examples))
        except NeuromathError as error:
            if len(examples) == 1:
                return [error]
        decoded: list[list[Candidate] | NeuromathError] = []
        for example in examples:
            try:
                decoded.extend(self.predict_nbest([example]))
            except NeuromathError as error:
                decoded.append(error)
        return decoded

    def solution(self, text: str, example, candidates: list[Candidate], attention: bool = False) -> Solution:
        """The Solution of ``text`` (read into ``example``) from its decoded n-best list."""
        unknown = tuple(dict.fromkeys(token for token in self.task.source_tokens(example)
                                      if token not in self.source_vocab))
        chosen = self.choose(candidates)
        listed = self.decode.nbest > 1
        maps = self.attention_maps(example, chosen.tokens) if attention else None
        if self.task.answer_text is not None:  # the answer is an expression or a string, not an equation's value
            answer_text, reason = self.task.answer_text(chosen.tokens, example)
            return Solution(
                text=text, equation="", answer=None, answer_text=answer_text, masked_equation=tuple(chosen.tokens),
                nbest=tuple(dataclasses.replace(c, answer_text=self.task.answer_text(c.tokens, example)[0])
                            for c in candidates) if listed else (),
                reason=reason, verified=chosen.verified, unknown_tokens=unknown, attention=maps,
                verdict=chosen.verdict,
            )
        record = self.task.describe(list(chosen.tokens), example)
        return Solution(
            text=text,
            equation=record["predicted_equation"] or "",
            answer=record["predicted_value"],
            answer_text=record["predicted_answer_text"] or "",
            masked_equation=tuple(chosen.tokens),
            nbest=tuple(self.describe_candidate(c, example) for c in candidates) if listed else (),
            reason=record["reason"] or "",  # set exactly when there is no answer text
            unknown_tokens=unknown,
            attention=maps,
            verdict=chosen.verdict,
        )


@dataclass(frozen=True)
class Verdict:
    """What ``solve`` of an equation classifier returns: the model's verdict on a typed equation and a check beside
    it."""

    text: str
    equation: str  # the equation as read (x, y, z, w for the symbols)
    probability: float  # the model's probability that the equation is an identity
    reference: bool | None  # the task's own check (identities: numeric evaluation); None when it cannot tell
    unknown_tokens: tuple[str, ...] = ()  # node symbols the run's vocabulary does not hold (read as <unk>)

    @property
    def identity(self) -> bool:
        return self.probability > 0.5

    def to_json(self) -> dict:
        """The object ``neuromath solve --json`` prints and ``POST /api/solve`` of ``neuromath serve`` answers."""
        return {"text": self.text, "equation": self.equation, "identity": self.identity,
                "probability": finite_or_none(self.probability), "numeric_check": self.reference,
                "unknown_tokens": list(self.unknown_tokens)}

    def __str__(self) -> str:
        check = {True: "true", False: "false", None: "cannot tell"}[self.reference]
        return (f"{self.equation}: {'true' if self.identity else 'false'} (probability {self.probability:.3f}); "
                f"numeric check: {check}")


@dataclass
class LoadedClassifier:
    """A trained equation classifier (identities task): ``logits(examples)`` > 0 means "an identity"."""

    model: torch.nn.Module
    vocab: Vocabulary
    config: Config
    run_dir: Path
    precision: str = "32-true"  # resolved (never auto): the forward passes of logits and completion run in it

    def logits(self, examples: Sequence[EquationExample], batch_size: int = 512) -> torch.Tensor:
        return predict_logits(self.model, examples, self.vocab, batch_size, self.precision)

    def solve(self, text: str, attention: bool = False) -> Verdict:
        """Is the typed equation (``sin(x)^2 + cos(x)^2 = 1``) an identity, by the model and by the task's check."""
        return answer_or_raise(self.solve_many([text], attention)[0])

    def solve_many(self, texts: Sequence[str],
                   attention: bool | Sequence[bool] = False) -> list[Verdict | NeuromathError]:
        """``solve`` of many typed equations with one forward pass over all of them: each one's Verdict, or the
        NeuromathError of an equation that cannot be read (or asks for attention, which a tree classifier has not)
        in its place."""
        task = get_task(self.config.data.task)
        if task.prepare is None:
            raise NeuromathError(f"solve does not apply to runs of the {task.name!r} task")
        wants_attention = attention_flags(attention, len(texts))
        results: list[Verdict | NeuromathError | None] = [None] * len(texts)
        trees: list[tuple[int, EquationNode]] = []  # (position in texts, equation tree)
        for position, text in enumerate(texts):
            if wants_attention[position]:
                results[position] = NeuromathError(
                    f"the {self.config.model.name} equation classifier of {self.run_dir} has no attention to show "
                    "(it reads the equation's tree bottom-up)")
                continue
            try:
                trees.append((position, task.prepare(text)))
            except NeuromathError as error:
                results[position] = error
        numbers = reads_numbers(self.model)
        logits = self.logits([EquationExample(tree, None) for _, tree in trees]) if trees else []
        for (position, tree), logit in zip(trees, logits):
            unknown = tuple(dict.fromkeys(token for node in preorder(tree) if node.func != "Equality"
                                          if (token := model_token(node, numbers)) not in self.vocab))
            probability = float(torch.sigmoid(logit))
            reference = task.reference_check(tree) if task.reference_check is not None else None
            results[position] = Verdict(texts[position], str(tree), probability, reference, unknown)
        return results  # type: ignore[return-value]

    def completion_scorer(self, candidates: Sequence[EquationNode]) -> CompletionScorer:
        """``scorer(equation, path)``: the logit of the equation with each candidate at ``path`` (see
        ``neuromath.models.classifiers.CompletionScorer``)."""
        return CompletionScorer(self.model, self.vocab, candidates, precision=self.precision)


def load_classifier(run_dir: str | Path, precision: str | None = None) -> LoadedClassifier:
    """A trained classifier from a run directory or a folder written by ``neuromath export`` (its config, node
    vocabulary and best weights), run in ``precision`` (None: the run's own ``train.precision``)."""
    run_dir = Path(run_dir)
    for needed in ("config.yaml", "node_vocab.json"):
        if not (run_dir / needed).exists():
            raise NeuromathError(f"{run_dir} is not a trained identities run (no {needed})")
    if not has_weights(run_dir):
        raise NeuromathError(f"{run_dir} is not a trained identities run (no {RUN_WEIGHTS} or {EXPORTED_WEIGHTS})")
    config = load_config(run_dir / "config.yaml")
    vocab = Vocabulary.load(run_dir / "node_vocab.json")
    model = build_classifier(config.model, vocab)
    load_run_weights(model, weights_file(run_dir))
    model.eval()
    return LoadedClassifier(model, vocab, config, run_dir, resolve_precision(precision or config.train.precision))


def run_task(run_dir: str | Path) -> SequenceTask | EquationTask:
    """The task a run folder's ``config.yaml`` names: the one thing read to tell what a run is."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").exists():
        raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
    return get_task(load_config(run_dir / "config.yaml").data.task)


def load(run_dir: str | Path, device: str = "cpu", precision: str | None = None,
         **decode) -> Solver | LoadedClassifier:
    """Load a trained run directory (or a folder written by ``neuromath export``): a ``Solver`` for prediction and
    solving (``decode`` overrides decoding settings, e.g. ``load(run, beam=10, nbest=5)``), or a ``LoadedClassifier``
    for an equation-classifier run. ``precision`` (``32-true``, ``bf16-mixed``, ``auto``, ...) overrides the run's own
    ``train.precision``."""
    if isinstance(run_task(run_dir), EquationTask):
        if decode:
            raise ConfigError(f"decoding options ({', '.join(sorted(decode))}) do not apply to an equation classifier")
        return load_classifier(run_dir, precision)
    return Solver(run_dir, device, precision, **decode)
