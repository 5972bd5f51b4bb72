"""The sequence side of ``neuromath.api``: ``Solver``, a trained sequence model with its vocabularies and task
(``.solve(text)``, ``.solve_many(texts)``, ``.predict_nbest(examples)``, ``.with_decode(beam=...)``), and what it
answers: ``Solution`` (its ``to_json()`` is what ``neuromath solve --json`` prints and ``neuromath serve``
answers), the n-best ``Candidate``s and the ``AttentionMap``s; the decoding options a command line may set."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from neuromath.api.answers import answer_or_raise, attention_flags, finite_or_none
from neuromath.config import Config, DecodeConfig, load_config
from neuromath.decoding.beam import beam_search
from neuromath.decoding.constraints import GrammarConstraint
from neuromath.decoding.fixed_shapes import FixedShapeDecoder
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError, NeuromathError
from neuromath.models import ModelInputs, build_model
from neuromath.models.batching import EncodedExamples, carried, collate, move_batch
from neuromath.models.contracts import SequenceModel
from neuromath.models.cost import CostLimits, ResourceLimitError, check_sequence_cost, resolve_limits, with_decode
from neuromath.models.weights import load_run_weights, weights_file
from neuromath.nn.precision import autocast, resolve_precision
from neuromath.nn.recording import recording
from neuromath.tasks import SequenceTask, get_task
from neuromath.tasks.symbolic.verify import user_verdict
from neuromath.text import Vocabulary


@dataclass(frozen=True)
class Candidate:
    """One entry of an n-best list: the model's tokens, their score and whether the task's verifier accepts them."""

    tokens: tuple[str, ...]
    score: float  # length-normalised log-probability (beam search's ranking score)
    verified: bool | None  # None when the task has no verifier
    # filled in by solve: the equation over the problem's own numbers; None when the tokens are not a well-formed
    # equation, or the task's answers are not equations (answer_text holds them)
    equation: str | None = None
    answer_text: str = ""  # filled in by solve: its value
    # filled in by solve where the answers are equations (word problems): whether the tokens form one over the
    # problem's numbers (``tokens`` are the model's own either way); None where the answers are not equations
    well_formed: bool | None = None
    # where the task names its verdicts: "verified", "not verified" or "unknown", the words of ``neuromath check``
    # (``verified`` is then ``verdict == "verified"``); None: a yes / no verifier or none
    verdict: str | None = None
    # ... and the verifier's own verdict (symbolic: correct, wrong, unparsable, invalid, undecided, timeout, error)
    verdict_detail: str | None = None

    def to_json(self) -> dict:
        return {"tokens": list(self.tokens), "equation": self.equation, "well_formed": self.well_formed,
                "answer_text": self.answer_text,
                "score": finite_or_none(self.score), "verified": self.verified, "verdict": self.verdict,
                "verdict_detail": self.verdict_detail}


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
    # the task's verifier on the answer shown, the chosen candidate's (symbolic: it differentiates back; word
    # problems: the equation is well-formed and has a value); None: the task has no verifier
    verified: bool | None = None
    unknown_tokens: tuple[str, ...] = ()  # input tokens the run's vocabulary does not hold (read as <unk>)
    attention: tuple[AttentionMap, ...] | None = None  # with solve(..., attention=True): every layer's weights
    verdict: str | None = None  # the verdict on the answer in words (``Candidate.verdict``): "verified", ...
    verdict_detail: str | None = None  # the verifier's own verdict (``Candidate.verdict_detail``): "timeout", ...

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
            "verdict_detail": self.verdict_detail,
            "unknown_tokens": list(self.unknown_tokens),
            "nbest": [candidate.to_json() for candidate in self.nbest],
            **({"attention": [m.to_json() for m in self.attention]} if self.attention else {}),
        }

    def __str__(self) -> str:
        if self.reason:
            shown = self.equation or f"model output {' '.join(self.masked_equation) or '(empty)'}"
            return f"no answer: {self.reason} ({shown})"
        # a word problem's verifier checks only that the equation is well-formed, which an equation with a value
        # shows already: the mark where the task names its verdicts, or the answer is not an equation
        verdict = verdict_mark(self) if self.verdict is not None or (self.verified is not None and not self.equation) \
            else ""
        return (f"{self.equation} = {self.answer_text}" if self.equation else self.answer_text) + verdict


def verdict_mark(answer: Candidate | Solution) -> str:
    """``  [verified]``, ``  [not verified]``, or with the verifier's own verdict where it says more than right or
    wrong: ``  [not verified: timeout]``."""
    words = answer.verdict or ("verified" if answer.verified else "not verified")
    detail = answer.verdict_detail
    return f"  [{words}: {detail}]" if detail not in (None, "correct", "wrong") else f"  [{words}]"


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
    (the ranges its fields declare). With the run's ``config``, the rules between the decoding and the other
    sections are checked too (``neuromath.config.rules.CONFIG_CHECKS``: a max_len above the model's)."""
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(DecodeConfig)})
    if unknown:
        raise ConfigError(f"unknown decoding option(s): {', '.join(unknown)}")
    decode = dataclasses.replace(decode, **changes)
    if config is not None:
        dataclasses.replace(config, decode=decode)  # Config.__post_init__ checks it
    return decode


class Solver:
    """A trained model with its vocabularies and task; decodes batches of examples.

    ``decode`` overrides the run's decoding settings (``DecodeConfig`` fields: beam, nbest,
    length_penalty, constrained, verify, max_len, batch_size). Before the model is built, its cost is estimated from
    the config (``neuromath.models.cost``) and refused past the limits: ``max_memory`` GB for its weights and one
    batch of decoding, ``max_decode_len`` decoding steps (None: those of the enclosing ``cost_limits``, else the
    defaults); ``limits`` gives them resolved instead (a vote of seeds shares one budget).
    """

    def __init__(self, run_dir: str | Path, device: str = "cpu", precision: str | None = None, *,
                 max_memory: float | None = None, max_decode_len: int | None = None, limits: CostLimits | None = None,
                 **decode):
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
        inputs = ModelInputs.for_task(self.task, self.source_vocab, self.target_vocab, run_dir)
        limits = limits if limits is not None else resolve_limits(max_memory, max_decode_len, self.device)
        # measured on the meta device and refused past the limits before a byte of the model is allocated
        self.cost = check_sequence_cost(self.config, inputs, run_dir / "config.yaml", weights_path, limits, self.decode)
        self.model: SequenceModel = build_model(self.config.model, inputs)
        load_run_weights(self.model, weights_path, self.device)
        self.model.to(self.device).eval()
        self.constraint = self.grammar_constraint(self.decode)
        self.fixed_decoders: dict[int, FixedShapeDecoder] = {}  # decode.compile: per max_len, shared by with_decode
        self.decoder(self.decode)  # a model that cannot decode.compile fails at load

    def decoder(self, decode: DecodeConfig):
        """What greedy and beam search decode through: the model, or with ``decode.compile`` its compiled fixed-shape
        steps (``neuromath.decoding.fixed_shapes``), built once per ``max_len``."""
        if not decode.compile:
            return self.model
        if decode.max_len not in self.fixed_decoders:
            self.fixed_decoders[decode.max_len] = FixedShapeDecoder(self.model, decode.max_len, compile=True)
        return self.fixed_decoders[decode.max_len]

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
        variant.cost = with_decode(self.cost, variant.decode)  # a wider beam or a longer decoding: checked again
        variant.constraint = self.grammar_constraint(variant.decode)
        variant.decoder(variant.decode)
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
        batch_size = self.sources_that_fit(encoded, batch_size)
        results: list[list[Candidate]] = []
        decoder = self.decoder(decode)
        for start in range(0, len(encoded), batch_size):
            batch = collate([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))])
            batch = {key: value.to(self.device) for key, value in batch.items()}
            with autocast(self.precision, self.device):
                if decode.beam == 1:
                    greedy = greedy_decode(decoder, batch, decode.max_len, constraint=self.constraint)
                    lists = [[(ids, 0.0)] for ids in greedy]
                else:
                    lists = [
                        [(h.tokens, h.normalized) for h in hypotheses]
                        for hypotheses in beam_search(
                            decoder, batch, decode.beam, decode.max_len, nbest=decode.nbest,
                            length_penalty=decode.length_penalty, constraint=self.constraint,
                        )
                    ]
            for hypotheses, example in zip(lists, encoded.examples[start : start + batch_size]):
                candidates = [
                    Candidate(tuple(self.target_vocab.decode(ids)), float(score), None) for ids, score in hypotheses
                ]
                results.append(candidates)
        return self.verify_candidates(results, encoded.examples)

    def sources_that_fit(self, encoded: EncodedExamples, batch_size: int) -> int:
        """The sources per batch: ``batch_size``, or fewer where a batch of the longest source would pass the memory
        limit (``neuromath.models.cost``); a ResourceLimitError when not even one fits."""
        longest = max((len(source) for source, _ in encoded.items), default=0)
        fit = self.cost.sources_that_fit(batch_size, longest)
        if fit < 1:
            raise ResourceLimitError(f"{self.run_dir}: {self.cost.refusal(1, longest)}")
        return fit

    def verify_candidates(self, results: list[list[Candidate]], examples: Sequence) -> list[list[Candidate]]:
        """Mark each candidate with the task's verifier: all at once where the task verifies in batches (symbolic
        checks run in a worker pool), else one by one. Where the verifier names its verdicts (``verdicts_many``), each
        candidate also gets its verdict in words (``user_verdict``: verified, not verified, unknown) and the
        verifier's own (``verdict_detail``), so that a check ended by its time limit reads "timeout", not just False."""
        verifier = self.task.verifier
        if verifier is None:
            return results
        pairs = [
            (candidate.tokens, example) for candidates, example in zip(results, examples) for candidate in candidates
        ]
        if verifier.verdicts_many is not None:
            names = iter(verifier.verdicts_many(pairs))
            return [[dataclasses.replace(c, verified=name == "correct", verdict=user_verdict(name), verdict_detail=name)
                     for c, name in zip(candidates, names)] for candidates in results]
        if verifier.verify_many is not None:
            verdicts = iter(verifier.verify_many(pairs))
        else:
            verdicts = iter(verifier.verify(tokens, example) for tokens, example in pairs)
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
        """``candidate`` with its equation over the problem's numbers and its value, and whether it is well-formed:
        a candidate that is not keeps ``equation`` None (its ``tokens`` say what the model wrote), never ``""``."""
        record = self.task.describe(list(candidate.tokens), example)
        return dataclasses.replace(
            candidate,
            equation=record["predicted_equation"] or None,
            answer_text=record.get("predicted_answer_text") or "",
            well_formed=bool(record["predicted_equation"]),
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
                verdict=chosen.verdict, verdict_detail=chosen.verdict_detail,
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
            verified=chosen.verified,  # the verdict of the answer shown, as each n-best entry carries its own
            unknown_tokens=unknown,
            attention=maps,
            verdict=chosen.verdict,
            verdict_detail=chosen.verdict_detail,
        )
