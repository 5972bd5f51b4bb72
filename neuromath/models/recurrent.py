"""Recurrent encoder-decoders for word problems: DNS (Wang et al. 2017, "Deep Neural Solver for Math Word
Problems", Sec. 3.1: GRU encoder, LSTM decoder), the Bi-LSTM sequence-to-sequence model with attention (Wang et al.
2018a, "Translating a Math Word Problem to an Expression Tree", Sec. 3.1; the attention of Luong et al. 2015,
eqs. 5 and 8, "general" score) and GroupATT (Li et al. 2019, "Modeling Intra-Relation in Math Word Problems with
Different Functional Multi-Head Attentions", Sec. 3: that Bi-LSTM encoder, a group-attention block, that decoder).

The models ``dns``, ``bilstm_seq2seq`` and ``group_attention`` (``neuromath.config.models``). Sizes from the config:
``d_model`` is the embedding size (the paper: 128), ``encoder_hidden`` the units of each encoder direction (256),
``decoder_hidden`` the decoder's (512), ``n_encoder_layers`` / ``n_decoder_layers`` the depths (2 / 2), and for
GroupATT ``groups`` the attention groups with ``n_heads`` heads shared equally among them (the paper: four groups,
two heads each; the Table 3 ablation: one group, eight heads) and ``d_ff`` its feed-forward width.

Choices of this implementation, where the papers leave room:

- the decoder starts from the encoder's final states, layer by layer (the two directions concatenated), through a
  linear map with tanh when the sizes differ; with fewer encoder layers than decoder layers the last one repeats;
- DNS has no attention: its decoder sees the problem through the GRU's final state (``decoder_hidden`` units, so
  the initial hidden state needs no map; the decoder's cell starts at 0), which is also fed with every target
  embedding (the context vector of Cho et al. 2014). Without that second path the decoder did not carry the state
  to the operator it had to choose: on the tiny task of tests/models/test_recurrent.py the loss stayed at the
  chance level of the operator, ln(3)/4, for 300 full-batch steps;
- attention is Luong's global attention without input feeding, so teacher forcing runs the decoder LSTM over the
  whole target in one call: a_t = softmax(h_t W m_s) over the encoder states m_s (padding excluded),
  c_t = sum_s a_ts m_s, h~_t = tanh(W_c [c_t; h_t]), p(y_t) = softmax(W_o h~_t);
- GroupATT's block works on the concatenated Bi-LSTM states (2 x ``encoder_hidden`` wide), and the decoder
  attends to the block's output; span roles come from the source tokens (``span_roles_from_ids``).

Model contract as in ``neuromath.models.transformer``: forward / encode / decode_step, batch-first tensors in
``memory`` and ``cache`` so that beam search can reorder them.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.config.models import RecurrentConfig
from neuromath.errors import ConfigError
from neuromath.models.contracts import SequenceModelParts
from neuromath.models.inputs import ModelInputs
from neuromath.nn.char_ngrams import build_char_ngrams
from neuromath.nn.dropout import Dropout
from neuromath.nn.group_attention import GroupAttentionBlock, group_masks, span_roles_from_ids
from neuromath.nn.pretrained import PretrainedWords, pretrained_words
from neuromath.nn.recording import Recorded
from neuromath.nn.sequence_encoders import run_packed
from neuromath.nn.subwords import build_subwords
from neuromath.nn.word_bags import with_word_parts
from neuromath.tasks.word_problems import MASK_REGEX, SPAN_BREAKS
from neuromath.text import Vocabulary


def parse_groups(text: str, n_heads: int) -> tuple[tuple[str, ...], int]:
    """The groups of ``model.groups`` and the heads of each: ``n_heads`` shared equally (the config checked both)."""
    groups = tuple(part.strip() for part in text.split(","))
    return groups, n_heads // len(groups)


class StateBridge(nn.Module):
    """Encoder final states (layers, B, E) -> decoder initial states (decoder layers, B, D)."""

    def __init__(self, encoder_size: int, decoder_size: int, decoder_layers: int):
        super().__init__()
        self.decoder_layers = decoder_layers
        self.project = nn.Linear(encoder_size, decoder_size) if encoder_size != decoder_size else None

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        layers = [states[min(index, states.size(0) - 1)] for index in range(self.decoder_layers)]
        stacked = torch.stack(layers)  # (L_dec, B, E)
        return torch.tanh(self.project(stacked)) if self.project is not None else stacked


class RecurrentSeq2Seq(PretrainedWords, SequenceModelParts, Recorded, nn.Module):
    """An RNN encoder and an LSTM decoder, with or without attention and a group-attention block (see the module
    docstring); subclasses only choose those parts."""

    encoder_kind = "bilstm"  # or "gru"
    attention = True
    group_attention = False

    def __init__(self, config: RecurrentConfig, inputs: ModelInputs):
        super().__init__()
        self.config = config
        pad_id = self.pad_id = inputs.pad_id
        source_tokens = inputs.source_tokens
        # word vectors from a pretrained Transformer (model.encoder pretrained) instead of the embeddings
        self.pretrained = pretrained_words(config, inputs, MASK_REGEX)
        if self.pretrained is None:
            self.source_embedding = nn.Embedding(inputs.source_vocab_size, config.d_model, padding_idx=pad_id)
            self.char_ngrams = build_char_ngrams(config.char_ngrams, config.d_model, inputs.source_words)
            self.subwords = build_subwords(config.subwords, config.d_model, inputs)
        self.target_embedding = nn.Embedding(inputs.target_vocab_size, config.d_model, padding_idx=pad_id)
        self.dropout = Dropout(config.dropout)
        between_layers = config.dropout if config.n_encoder_layers > 1 else 0.0
        if self.encoder_kind == "bilstm":
            self.encoder = nn.LSTM(config.d_model, config.encoder_hidden, config.n_encoder_layers, batch_first=True,
                                   bidirectional=True, dropout=between_layers)
            memory_size = 2 * config.encoder_hidden
        else:
            self.encoder = nn.GRU(config.d_model, config.decoder_hidden, config.n_encoder_layers, batch_first=True,
                                  dropout=between_layers)
            memory_size = config.decoder_hidden
        self.hidden_bridge = StateBridge(memory_size, config.decoder_hidden, config.n_decoder_layers)
        self.cell_bridge = (
            StateBridge(memory_size, config.decoder_hidden, config.n_decoder_layers)
            if self.encoder_kind == "bilstm" else None
        )
        self.block = None
        if self.group_attention:
            if source_tokens is None:
                raise ConfigError("group_attention needs the source vocabulary's tokens to find spans and numbers")
            groups, heads_per_group = parse_groups(config.groups, config.n_heads)
            self.block = GroupAttentionBlock(memory_size, config.d_ff, groups, heads_per_group, config.dropout)
            not_text = {pad_id, Vocabulary.bos_id, Vocabulary.eos_id}  # unknown words are text
            tables = {
                "is_break": [token in SPAN_BREAKS for token in source_tokens],
                "is_number": [MASK_REGEX.fullmatch(token) is not None for token in source_tokens],
                "is_text": [index not in not_text for index in range(len(source_tokens))],
            }
            for name, values in tables.items():
                self.register_buffer(name, torch.tensor(values, dtype=torch.bool), persistent=False)
        decoder_input = config.d_model if self.attention else config.d_model + memory_size  # + the context vector
        self.decoder = nn.LSTM(decoder_input, config.decoder_hidden, config.n_decoder_layers, batch_first=True,
                               dropout=config.dropout if config.n_decoder_layers > 1 else 0.0)
        if self.attention:
            self.score = nn.Linear(memory_size, config.decoder_hidden, bias=False)  # W in h_t W m_s
            self.combine = nn.Linear(memory_size + config.decoder_hidden, config.decoder_hidden, bias=False)  # W_c
        self.output = nn.Linear(config.decoder_hidden, inputs.target_vocab_size)

    # -- encoder ---------------------------------------------------------------------------------------------------
    def encode(self, batch: dict) -> dict:
        source = batch["source"]  # (B, S)
        valid = source.ne(self.pad_id)  # (B, S)
        if self.pretrained is not None:  # the pretrained encoder's word vectors (B, S, E)
            embedded = self.dropout(self.pretrained(batch["source_words"].rows, source.size(1), source.device))
        else:  # the words' embeddings, with their n-grams and subword pieces where configured
            parts = (self.char_ngrams, self.subwords)
            embedded = self.dropout(with_word_parts(self.source_embedding(source), parts, batch))  # (B, S, E)
        states, final = run_packed(self.encoder, embedded, valid)  # (B, S, M)
        if self.encoder_kind == "bilstm":
            hidden, cell = final  # each (layers * 2, B, H)
            hidden = self.join_directions(hidden)  # (layers, B, 2H)
            decoder_hidden = self.hidden_bridge(hidden)
            decoder_cell = self.cell_bridge(self.join_directions(cell))
        else:
            decoder_hidden = self.hidden_bridge(final)  # (L_dec, B, D)
            decoder_cell = torch.zeros_like(decoder_hidden)
        if self.block is not None:
            spans, quantity, question, valid_tokens = span_roles_from_ids(
                source, self.is_break, self.is_number, self.is_text, self.pad_id
            )
            states = self.block(states, group_masks(spans, quantity, question, valid_tokens))  # (B, S, M)
        memory = {
            "states": states,
            "valid": valid,
            # batch first, so that beam search reorders them with the rest: (B, L_dec, D)
            "hidden": decoder_hidden.transpose(0, 1).contiguous(),
            "cell": decoder_cell.transpose(0, 1).contiguous(),
        }
        if not self.attention:  # the context vector fed with every target embedding: the top layer's final state
            top = final[0][-2:] if self.encoder_kind == "bilstm" else final[-1:]  # (directions, B, H)
            memory["context"] = top.transpose(0, 1).reshape(source.size(0), -1)  # (B, M)
        return memory

    @staticmethod
    def join_directions(states: torch.Tensor) -> torch.Tensor:
        layers2, batch, hidden = states.shape
        return states.view(layers2 // 2, 2, batch, hidden).transpose(1, 2).reshape(
            layers2 // 2, batch, 2 * hidden
        )  # (L, B, 2H)

    # -- decoder ---------------------------------------------------------------------------------------------------
    def decode(self, memory: dict, target_in: torch.Tensor, hidden: torch.Tensor, cell: torch.Tensor):
        """Logits (B, T, V) for ``target_in`` (B, T) from decoder states (B, L, D); returns the new states too."""
        embedded = self.dropout(self.target_embedding(target_in))  # (B, T, E)
        if not self.attention:
            context = memory["context"].unsqueeze(1).expand(-1, target_in.size(1), -1)  # (B, T, M)
            embedded = torch.cat([embedded, context], dim=-1)  # (B, T, E + M)
        outputs, (hidden, cell) = self.decoder(
            embedded, (hidden.transpose(0, 1).contiguous(), cell.transpose(0, 1).contiguous())
        )  # (B, T, D), (L, B, D)
        if self.attention:
            keys = self.score(memory["states"])  # (B, S, D)
            scores = outputs @ keys.transpose(1, 2)  # (B, T, S)
            scores = scores.masked_fill(~memory["valid"][:, None, :], float("-inf"))
            weights = torch.softmax(scores, dim=-1)  # (B, T, S)
            if self.recorder is not None:
                self.record("cross", weights.unsqueeze(1), head_labels=["decoder"], title="decoder attention (Luong)")
            context = weights @ memory["states"]  # (B, T, M)
            outputs = torch.tanh(self.combine(torch.cat([context, outputs], dim=-1)))  # (B, T, D)
        logits = self.output(self.dropout(outputs))  # (B, T, V)
        return logits, hidden.transpose(0, 1), cell.transpose(0, 1)

    def forward(self, batch: dict) -> torch.Tensor:
        memory = self.encode(batch)
        logits, _, _ = self.decode(memory, batch["target_in"], memory["hidden"], memory["cell"])
        return logits

    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None) -> tuple[torch.Tensor, dict]:
        """Log-probabilities of the next token after ``prefix`` (B, t); the cache holds the decoder states after
        the tokens already read, so only the new ones are run."""
        if cache is None or "length" not in cache:
            cache = {"hidden": memory["hidden"], "cell": memory["cell"]}
            done = 0
        else:
            done = int(cache["length"][0])
        logits, hidden, cell = self.decode(memory, prefix[:, done:], cache["hidden"], cache["cell"])
        cache = {
            "hidden": hidden,
            "cell": cell,
            "length": torch.full((prefix.size(0),), prefix.size(1), dtype=torch.long, device=prefix.device),
        }
        return torch.log_softmax(logits[:, -1].float(), dim=-1), cache


class DeepNeuralSolver(RecurrentSeq2Seq):
    """DNS (Wang et al. 2017): a GRU encoder whose final state starts an LSTM decoder, no attention."""

    encoder_kind = "gru"
    attention = False


class BiLSTMSeq2Seq(RecurrentSeq2Seq):
    """The Bi-LSTM encoder-decoder with attention of Wang et al. 2018a, the baseline of Li et al. 2019."""


class GroupAttentionSeq2Seq(RecurrentSeq2Seq):
    """GroupATT (Li et al. 2019): the Bi-LSTM encoder, a group-attention block over its states, the decoder."""

    group_attention = True
