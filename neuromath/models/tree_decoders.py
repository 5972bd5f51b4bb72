"""Tree-decoding word-problem solvers: GTS (Xie & Sun 2019, "A Goal-Driven Tree-Structured Neural Model for Math Word
Problems": the Bi-GRU encoder of Sec. 3.1 and the goal-driven tree decoder of Sec. 3.2, eq. 2-12, in
``neuromath.nn.goal_tree``) and Graph2Tree (Zhang et al. 2020, "Graph-to-Tree Learning for Solving Math Word Problems":
the same decoder over the Bi-GRU states refined by graph convolution over the quantity cell graph and the quantity
comparison graph, Sec. 3.2-3.3, ``neuromath.nn.graph`` and ``neuromath.tasks.word_problems.graphs``).

The models ``gts`` and ``graph2tree`` (``neuromath.config.models``). Two switches exist for ablations: ``model.numbers:
slot`` embeds a number by its slot (a learned vector per ``n0, n1, ...``) instead of pointing at its encoder state, and
``model.subtree_embedding: false`` hides finished subtrees from the right goals. ``model.number_relevance: W`` adds an
auxiliary training loss (weight W): each number's encoder state predicts whether the gold equation uses that number, so
the encoder is told which of the problem's numbers are distractors (decoding is unchanged). ``model.shared_words: true``
(graph2tree) adds the links between the occurrences of a number's cell words to both cell graphs
(``shared_word_links``); ``model.graph_text: true`` builds the graphs from the words as written (the batch's
``source_words``) instead of the vocabulary's tokens, where every unknown word is one ``<unk>`` and no content word.

Sizes from the config: ``d_model`` embeds words and operators (the papers: 128), ``encoder_hidden`` is H, the width
of each GRU direction, of the encoder states (the two directions summed), of goals and of subtree embeddings (512),
``n_encoder_layers`` the GRU's depth (2), ``dropout`` (0.5), and for Graph2Tree ``d_ff`` the graph module's
feed-forward width.

The output vocabulary is the target vocabulary's tokens by kind: operators (arity 1 or 2 in the task's prefix
grammar), constants (the other leaves of the training equations) and number slots ``n0, n1, ...``; a number slot is
scored through the encoder state at that number's position in *this* problem, and slots the problem lacks are masked.
Padding, bos and unk are never produced; eos comes exactly once the tree is complete.

Model contract as in ``neuromath.models.transformer``: ``forward(batch)`` gives teacher-forced logits (B, T, V), built
node by node across the batch (``neuromath.nn.goal_tree``); ``encode`` / ``decode_step`` decode one node per call for
greedy and beam search, whose cache is the decoder's tree state (batch-first tensors that beam search reorders).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from neuromath.config.models import TreeDecoderConfig
from neuromath.errors import ConfigError
from neuromath.models.contracts import SequenceModelParts
from neuromath.models.inputs import ModelInputs
from neuromath.nn.char_ngrams import build_char_ngrams
from neuromath.nn.dropout import Dropout
from neuromath.nn.goal_tree import MASKED_LOGIT, NEG_INF, GoalDrivenTreeDecoder
from neuromath.nn.goal_tree_levels import LevelPlan, goals_and_contexts, plan_levels, subtree_embeddings
from neuromath.nn.graph import GraphConvolutionModule
from neuromath.nn.pretrained import PretrainedWords, pretrained_words
from neuromath.nn.sequence_encoders import run_packed
from neuromath.nn.subwords import build_subwords
from neuromath.nn.word_bags import with_word_parts
from neuromath.tasks.word_problems import MASK_REGEX
from neuromath.tasks.word_problems.graphs import comparison_links, quantity_cell_links, shared_word_links
from neuromath.text import Vocabulary

OTHER, OPERATOR, LEAF, END = 0, 1, 2, 3  # kinds of target ids
# Graph2Tree's graphs, one head each; in graph k node i reads node j when adjacency[k, i, j] = 1
GRAPHS = ("number reads its words", "word reads its numbers", "larger reads smaller", "smaller reads larger")
SPECIAL_IDS = (Vocabulary.pad_id, Vocabulary.bos_id, Vocabulary.eos_id, Vocabulary.unk_id)
GRAPH_MEMO_ROWS = 65_536  # rows whose graph links a model remembers (about 2 KB each)
DECODER_MEMORY = ("root", "states", "keys", "valid", "leaves", "leaf_valid")  # what decoding reads of ``encode``


class GoalDrivenTreeSolver(PretrainedWords, SequenceModelParts, nn.Module):
    """GTS: a two-layer bidirectional GRU encoder and the goal-driven tree decoder (see the module docstring)."""

    graph_encoder = False

    def __init__(self, config: TreeDecoderConfig, inputs: ModelInputs):
        super().__init__()
        if inputs.target_tokens is None or inputs.target_classes is None or inputs.source_tokens is None:
            raise ConfigError(f"{config.name} needs a task whose targets are equations of a prefix grammar")
        if inputs.target_classes.notation != "prefix":
            raise ConfigError(f"{config.name} builds trees in prefix order; the task's targets are "
                              f"{inputs.target_classes.notation} (use data.task word_problems)")
        self.config = config
        self.pad_id = inputs.pad_id
        hidden = self.hidden = config.encoder_hidden
        self.source_tokens = tuple(inputs.source_tokens)

        # target ids by kind; number slots ordered by their index n0, n1, ...
        arity = inputs.target_classes.arity
        tokens = inputs.target_tokens
        numbers = sorted(
            (int(MASK_REGEX.fullmatch(token)[1]), index) for index, token in enumerate(tokens)
            if index not in SPECIAL_IDS and MASK_REGEX.fullmatch(token)
        )
        number_ids = [index for _, index in numbers]
        op_ids = [index for index in range(len(tokens)) if index not in SPECIAL_IDS and arity[index] > 0]
        constant_ids = [
            index for index in range(len(tokens))
            if index not in SPECIAL_IDS and arity[index] == 0 and index not in set(number_ids)
        ]
        kind, op_index, leaf_index = [OTHER] * len(tokens), [-1] * len(tokens), [-1] * len(tokens)
        for position, index in enumerate(op_ids):
            kind[index], op_index[index] = OPERATOR, position
        for position, index in enumerate(constant_ids + number_ids):
            kind[index], leaf_index[index] = LEAF, position
        kind[Vocabulary.eos_id] = END
        self.n_constants = len(constant_ids)
        self.register_buffer("target_kind", torch.tensor(kind), persistent=False)
        self.register_buffer("op_index", torch.tensor(op_index), persistent=False)
        self.register_buffer("leaf_index", torch.tensor(leaf_index), persistent=False)
        self.register_buffer("op_ids", torch.tensor(op_ids, dtype=torch.long), persistent=False)
        self.register_buffer("leaf_ids", torch.tensor(constant_ids + number_ids, dtype=torch.long), persistent=False)
        # source id -> its number slot (position among number_ids), -1 for words and numbers no equation may use
        slot_of_number = {int(MASK_REGEX.fullmatch(tokens[index])[1]): slot for slot, index in enumerate(number_ids)}
        source_slot = [
            slot_of_number.get(int(match[1]), -1) if (match := MASK_REGEX.fullmatch(token)) else -1
            for token in inputs.source_tokens
        ]
        self.register_buffer("source_slot", torch.tensor(source_slot, dtype=torch.long), persistent=False)
        self.n_numbers = len(number_ids)
        self.register_buffer("number_target_ids", torch.tensor(number_ids, dtype=torch.long), persistent=False)

        self.embedding_dropout = Dropout(config.dropout)
        # word vectors from a pretrained Transformer (model.encoder pretrained) instead of the embeddings
        self.pretrained = pretrained_words(config, inputs, MASK_REGEX)
        if self.pretrained is None:
            self.source_embedding = nn.Embedding(inputs.source_vocab_size, config.d_model, padding_idx=self.pad_id)
            self.char_ngrams = build_char_ngrams(config.char_ngrams, config.d_model, inputs.source_words)
            self.subwords = build_subwords(config.subwords, config.d_model, inputs)
        self.encoder = nn.GRU(config.d_model, hidden, config.n_encoder_layers, batch_first=True, bidirectional=True,
                              dropout=config.dropout if config.n_encoder_layers > 1 else 0.0)
        self.graph = None
        self.graph_memo: dict[tuple, list[tuple[int, int, int]]] = {}  # a row's content -> its links (``graphs``)
        if self.graph_encoder:
            self.graph = GraphConvolutionModule(hidden, config.d_ff, len(GRAPHS), config.dropout)
        self.decoder = GoalDrivenTreeDecoder(
            hidden, config.d_model, [arity[index] for index in op_ids], self.n_constants, config.dropout,
            subtree_embedding=config.subtree_embedding,
        )
        # the ablation without pointing: a learned embedding per number slot, whatever the problem says around it
        self.slot_embedding = (
            nn.Parameter(torch.randn(self.n_numbers, hidden) * hidden**-0.5) if config.numbers == "slot" else None
        )
        self.relevance = nn.Linear(hidden, 1) if config.number_relevance > 0 else None
        self.last_auxiliary_loss: torch.Tensor | None = None  # set by a training forward, read by the trainer
        self.host_tables: tuple[list[int], ...] | None = None  # ``level_tables``

    # -- encoder ---------------------------------------------------------------------------------------------------
    def encode(self, batch: dict) -> dict:
        source = batch["source"]  # (B, S)
        # the graphs first: their one host read of the batch then waits for no kernel of this step
        adjacency = self.graphs(batch) if self.graph is not None else None
        valid = source.ne(self.pad_id)  # (B, S)
        if self.pretrained is not None:  # the pretrained encoder's word vectors (B, S, E)
            embedded = self.pretrained(batch["source_words"].rows, source.size(1), source.device)
        else:  # the words' embeddings, with their n-grams and subword pieces where configured
            embedded = with_word_parts(self.source_embedding(source), (self.char_ngrams, self.subwords), batch)
        outputs, final = run_packed(self.encoder, self.embedding_dropout(embedded), valid)  # (B, S, 2H)
        states = outputs[..., : self.hidden] + outputs[..., self.hidden :]  # (B, S, H): the directions summed
        root = final[-2] + final[-1]  # (B, H): the last layer's final forward and backward states
        if adjacency is not None:
            states = self.graph(states, adjacency)
        # the problem's numbers: the encoder state at each slot's position (B, K, H), and which slots it has
        slots = self.source_slot[source]  # (B, S)
        at_slot = (slots[:, :, None] == torch.arange(self.n_numbers, device=source.device)).to(states.dtype)
        count = at_slot.sum(dim=1)  # (B, K)
        numbers = (at_slot.transpose(1, 2) @ states) / count.clamp(min=1)[..., None]  # (B, K, H)
        if self.slot_embedding is not None:
            numbers = self.slot_embedding.expand(source.size(0), -1, -1)
        constants = self.decoder.constant_embedding.expand(source.size(0), -1, -1)  # (B, C, H)
        leaves = torch.cat([constants, numbers], dim=1)  # (B, C + K, H)
        every_constant = torch.ones(source.size(0), self.n_constants, dtype=torch.bool, device=source.device)
        leaf_valid = torch.cat([every_constant, count.gt(0)], dim=1)  # (B, C + K)
        keys = self.decoder.attention_keys(states)
        return {"states": states, "keys": keys, "valid": valid, "root": root, "leaves": leaves,
                "leaf_valid": leaf_valid, "numbers": numbers, "number_present": count.gt(0)}

    def relevance_loss(self, memory: dict, target: torch.Tensor) -> torch.Tensor:
        """``model.number_relevance`` times the binary cross-entropy of predicting, from each number's encoder state,
        whether the target equation (B, T) uses it; averaged over the numbers the problems hold."""
        logits = self.relevance(memory["numbers"]).squeeze(-1)  # (B, K)
        used = (target[:, :, None] == self.number_target_ids).any(dim=1).to(logits.dtype)  # (B, K)
        present = memory["number_present"]
        losses = nn.functional.binary_cross_entropy_with_logits(logits.float(), used.float(), reduction="none")
        mean = (losses * present).sum() / present.sum().clamp(min=1)
        return self.config.number_relevance * mean

    def graphs(self, batch: dict) -> torch.Tensor:
        """The adjacency (B, 4, S, S) of ``GRAPHS``: the quantity cell graph in both directions (with
        ``model.shared_words``, plus the links between the occurrences of a cell's words in both), the quantity
        comparison graph and its reverse.

        The batch is read on the host once (its ids and number values, one copy each), each row's links come from
        ``graph_links``, remembered by the row's content (a training problem's links are found in its first epoch
        and looked up after that), and the adjacency is filled on the batch's device from one small index tensor."""
        source = batch["source"]
        size, length = source.shape
        values = batch.get("number_values")
        written = batch.get("source_words") if self.config.graph_text else None
        if self.config.graph_text and written is None:
            raise ConfigError("model.graph_text builds graph2tree's graphs from the problems' words, and this batch "
                              "does not carry them (a task with source_words, batched by neuromath.models.batching)")
        value_rows = values.tolist() if values is not None else None
        edges = []  # (row, graph, reader, read)
        for row, ids in enumerate(source.tolist()):
            words = tuple(written[row][: len(ids)]) if written is not None else None
            row_values = (tuple(None if value != value else value for value in value_rows[row])  # NaN: no number
                          if value_rows is not None else None)
            key = (tuple(ids), words, row_values)
            links = self.graph_memo.get(key)
            if links is None:
                links = self.graph_links(ids, words, row_values)
                if len(self.graph_memo) >= GRAPH_MEMO_ROWS:  # a bound on its memory: start again
                    self.graph_memo.clear()
                self.graph_memo[key] = links
            edges += [(row, *link) for link in links]
        adjacency = torch.zeros(size, len(GRAPHS), length, length, device=source.device)
        if edges:
            index = torch.tensor(edges, dtype=torch.long)
            adjacency[tuple(index.to(source.device, non_blocking=True).T)] = 1.0
        return adjacency

    def graph_links(self, ids: list[int], words: tuple[str, ...] | None,
                    values: tuple[float | None, ...] | None) -> list[tuple[int, int, int]]:
        """One row's links (graph, reader, read) from its source ``ids``, its ``words`` as written (or None: the
        vocabulary's tokens) and its numbers' ``values`` (None where a slot holds no number; no values at all: no
        comparison graph)."""
        tokens = [self.source_tokens[index] for index in ids]
        if words is not None:  # the words as written; eos and padding as the ids say
            tokens[: len(words)] = words
        links = []
        cells = quantity_cell_links(tokens)
        for number, word in cells:
            links += [(0, number, word), (1, word, number)]
        if self.config.shared_words:  # words read their other occurrences in both cell graphs
            for reader, read in shared_word_links(tokens, cells):
                links += [(0, reader, read), (1, reader, read)]
        if values is None:
            return links
        positions = {}  # number index -> its position
        for position, token in enumerate(tokens):
            match = MASK_REGEX.fullmatch(token)
            if match:
                positions.setdefault(int(match[1]), position)
        for larger, smaller in comparison_links([math.nan if value is None else value for value in values]):
            if larger in positions and smaller in positions:
                big, small = positions[larger], positions[smaller]
                links += [(2, big, small), (3, small, big)]
        return links

    # -- decoder ---------------------------------------------------------------------------------------------------
    def node_logits(self, memory: dict, state: dict, masked: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Logits (N, V) of the next token for every row, with ``masked`` where the state allows no such token; and
        the goal and context they were computed from."""
        decoder = self.decoder
        goal = decoder.goal(state)
        context = decoder.context(goal, memory["states"], memory["keys"], memory["valid"])
        op_scores, leaf_scores = decoder.scores(goal, context, memory["leaves"])
        leaf_scores = leaf_scores.masked_fill(~memory["leaf_valid"], masked)
        rows = goal.size(0)
        logits = torch.full((rows, self.target_kind.numel()), masked, dtype=op_scores.dtype, device=goal.device)
        logits[:, self.op_ids] = op_scores
        logits[:, self.leaf_ids] = leaf_scores
        complete = state["goal_depth"].eq(0)  # (N,): only eos may follow a complete tree, and only there
        logits = logits.masked_fill(complete[:, None], masked)
        logits[:, Vocabulary.eos_id] = torch.where(complete, 0.0, masked).to(logits.dtype)
        return logits, goal, context

    def take(self, memory: dict, state: dict, goal: torch.Tensor, context: torch.Tensor,
             tokens: torch.Tensor) -> dict:
        """The tree state after ``tokens`` (N,) (target ids) at the node predicted from ``goal`` / ``context``."""
        kind = self.target_kind[tokens]
        open_tree = state["goal_depth"].gt(0)
        op = torch.where(kind.eq(OPERATOR) & open_tree, self.op_index[tokens], -1)
        leaf = torch.where(kind.eq(LEAF) & open_tree, self.leaf_index[tokens], -1)
        return self.decoder.apply(state, goal, context, op, leaf, memory["leaves"])

    def forward(self, batch: dict) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) for ``batch["target_out"]`` (prefix tokens, then eos, then padding).

        Node t is computed only for the trees that still have a token at t: the rows are put in order of target
        length, so those trees are the first rows and the state and memory of the step are views of that prefix.
        A row past its eos gets what its complete tree would score (only eos, at 0), as padding is never scored.
        Under ``recording`` every row takes every step, so the recorded maps keep one row per problem."""
        target = batch["target_out"]  # (B, T)
        plan = None
        if self.config.tree_forcing == "levels" and self.decoder.recorder is None:
            # planned before the encoder's work is queued: reading the targets then waits for no kernel
            plan = plan_levels(target, *self.level_tables(), Vocabulary.eos_id,
                               needs_subtrees=self.config.subtree_embedding)
        memory = self.encode(batch)
        if self.relevance is not None and self.training:
            self.last_auxiliary_loss = self.relevance_loss(memory, target)
        if self.decoder.recorder is not None:
            return self.every_row_forced(memory, target)
        if plan is not None:
            return self.level_forced(memory, target, plan)
        rows, length = target.shape
        lengths = target.ne(self.pad_id).sum(dim=1)  # tokens up to and with eos
        order = torch.argsort(lengths, descending=True, stable=True)
        active = (lengths[order][None, :] > torch.arange(length, device=target.device)[:, None]).sum(dim=1)
        memory = {key: memory[key].index_select(0, order) for key in DECODER_MEMORY}
        target = target.index_select(0, order)
        state = self.decoder.start(memory["root"])
        steps, done = [], None
        for step, count in enumerate(active.tolist()):  # one node of every unfinished tree per step
            if count == 0:  # only padding from here on
                steps += [done.expand(rows, -1)] * (length - step)
                break
            if count < memory["root"].size(0):
                memory = {key: value[:count] for key, value in memory.items()}
                state = {key: value[:count] for key, value in state.items()}
            logits, goal, context = self.node_logits(memory, state, MASKED_LOGIT)
            if done is None:  # a complete tree's logits: only eos, at 0
                done = torch.full_like(logits[:1], MASKED_LOGIT)
                done[:, Vocabulary.eos_id] = 0.0
            steps.append(torch.cat([logits, done.expand(rows - count, -1)]) if count < rows else logits)
            state = self.take(memory, state, goal, context, target[:count, step])
        return torch.stack(steps, dim=1).index_select(0, torch.argsort(order))  # (B, T, V), the batch's order

    def level_tables(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """The target ids' kinds, operator and leaf indices and the operators' arities as host lists, for
        ``plan_levels`` (read from the buffers once: they never change)."""
        if self.host_tables is None:
            self.host_tables = tuple(table.tolist() for table in (self.target_kind, self.op_index, self.leaf_index,
                                                                  self.decoder.op_arity))
        return self.host_tables

    def level_forced(self, memory: dict, target: torch.Tensor, plan: LevelPlan) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) one tree level at a time (``neuromath.nn.goal_tree_levels``): the same
        logits as node-by-node forcing, with every node's scores from one call."""
        rows, length = target.shape
        embedding = subtree_embeddings(self.decoder, plan, memory["leaves"])
        goal_context = goals_and_contexts(self.decoder, plan, memory, embedding)  # nodes in depth order
        op_scores, leaf_scores = self.decoder.scores_of(goal_context, memory["leaves"].index_select(0, plan.order_row))
        leaf_scores = leaf_scores.masked_fill(~memory["leaf_valid"].index_select(0, plan.order_row), MASKED_LOGIT)
        logits = torch.full((goal_context.size(0), self.target_kind.numel()), MASKED_LOGIT, dtype=op_scores.dtype,
                            device=goal_context.device)  # an open tree's node: never eos
        logits[:, self.op_ids] = op_scores
        logits[:, self.leaf_ids] = leaf_scores.to(op_scores.dtype)
        done = torch.full_like(logits[:1], MASKED_LOGIT)  # eos and what follows it: a complete tree's logits
        done[:, Vocabulary.eos_id] = 0.0
        out = done.expand(rows * length, -1).index_copy(0, plan.order_flat, logits)
        return out.view(rows, length, -1)

    def every_row_forced(self, memory: dict, target: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) with every row taking every step (finished trees take eos and padding,
        which leave them as they are)."""
        state = self.decoder.start(memory["root"])
        steps = []
        for tokens in target.unbind(1):
            logits, goal, context = self.node_logits(memory, state, MASKED_LOGIT)
            steps.append(logits)
            state = self.take(memory, state, goal, context, tokens)
        return torch.stack(steps, dim=1)  # (B, T, V)

    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None) -> tuple[torch.Tensor, dict]:
        """Log-probabilities (N, V) of the next token after ``prefix`` (N, t), -inf for every token the tree state
        does not allow; the cache is that state (without it the prefix is replayed)."""
        if cache is None or "goal" not in cache:
            state = self.decoder.start(memory["root"])
            for tokens in prefix[:, 1:].unbind(1):
                _, goal, context = self.node_logits(memory, state, MASKED_LOGIT)
                state = self.take(memory, state, goal, context, tokens)
        else:
            state = {key: value for key, value in cache.items() if key not in ("goal", "context")}
            state = self.take(memory, state, cache["goal"], cache["context"], prefix[:, -1])
        logits, goal, context = self.node_logits(memory, state, NEG_INF)
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        return log_probs, {**state, "goal": goal, "context": context}


class GraphToTreeSolver(GoalDrivenTreeSolver):
    """Graph2Tree: GTS whose encoder states pass through graph convolution over the quantity cell graph and the
    quantity comparison graph (and its reverse) before the tree decoder reads them."""

    graph_encoder = True
