"""A pretrained Transformer encoder under a word-problem model (``model.encoder: pretrained``, ``model.pretrained:
NAME_OR_PATH``), read through Hugging Face ``transformers`` (``AutoModel``, ``AutoTokenizer``; the optional extra
``pretrained``).

It takes the place of the model's word embeddings, as in the RoBERTa and BERT variants of the SVAMP paper's code
(Patel et al. 2021): the model's own recurrent encoder still reads the sequence of word vectors. The model keeps its
word-level view of a problem: its vocabulary, its number slots ``n0, n1, ...``, the positions its pointers and graphs
use. The pretrained encoder reads the same words (the batch's ``source_words``, as the task wrote them), each number
slot replaced by one added special token ``[NUM]``, so that numbers stay masked however the tokenizer cuts words. The
tokenizer cuts the words into pieces (``is_split_into_words``); a word's vector is the encoder's state at its first
piece, projected to the model's embedding width, so position i of the output is word i of the source and each
quantity's span maps to its pieces through ``word_ids``. A word cut off by the encoder's length limit gets a zero
vector.

Two ways to build it:

- from ``model.pretrained`` (a hub name or a local folder) when a run starts: weights, config and tokenizer;
- from a run folder's or an export's ``pretrained/`` (``PRETRAINED_DIR``: the encoder's ``config.json`` and tokenizer
  files, written by ``save_files`` when the run started) when a run resumes or a trained model loads: the structure
  only, its weights come with the model's own (``model.pt``, ``model.safetensors``). So a trained model loads offline.

``freeze_embeddings`` stops training the embedding tables, ``freeze_layers`` N the lowest N layers as well.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from neuromath.errors import ConfigError

NUMBER_TOKEN = "[NUM]"
PRETRAINED_DIR = "pretrained"  # in a run folder and an export: the encoder's config.json and tokenizer files
# what save_files may write there: the config and the tokenizer files of the families transformers ships; a run's
# export copies these and only these
PRETRAINED_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                    "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model",
                    "sentencepiece.bpe.model", "tokenizer.model")
INSTALL_HINT = "pip install 'neuromath-toolkit[pretrained]'"


def transformers_module():
    """``transformers``, imported when a pretrained encoder is built; a clear error when it is not installed."""
    try:
        import transformers
    except ImportError:
        raise ConfigError(f"model.encoder pretrained reads the encoder with Hugging Face transformers, which is not "
                          f"installed: {INSTALL_HINT}") from None
    transformers.logging.set_verbosity_error()  # the "weights not used / newly initialised" notes of a head
    transformers.utils.logging.disable_progress_bar()  # no bar per weights file on stderr
    return transformers


def pretrained_words(config, inputs, number_pattern: re.Pattern) -> PretrainedWordEncoder | None:
    """The pretrained encoder of a model config with ``model.encoder: pretrained`` (None otherwise), giving
    ``config.d_model``-wide word vectors: built from ``inputs.pretrained_dir`` (a trained run's files) when there is
    one, else from ``model.pretrained``."""
    if getattr(config, "encoder", None) != "pretrained":
        return None
    if not inputs.source_words:
        raise ConfigError(f"{config.name} with model.encoder pretrained reads the problems' words; this task's "
                          "batches do not carry them")
    return PretrainedWordEncoder(inputs.pretrained_dir or config.pretrained, config.d_model,
                                 from_files=inputs.pretrained_dir is not None, number_pattern=number_pattern,
                                 freeze_embeddings=config.freeze_embeddings, freeze_layers=config.freeze_layers)


class PretrainedWords:
    """What a model with ``model.encoder: pretrained`` shares: its encoder's parameters (for ``optim.encoder_lr``)
    and its files (saved in a run folder when the run starts). The model sets ``self.pretrained``, the encoder or
    None, in its constructor."""

    def pretrained_parameters(self) -> list[nn.Parameter]:
        """The pretrained encoder's own parameters (the optimiser gives them ``optim.encoder_lr``); [] without one."""
        return list(self.pretrained.encoder.parameters()) if self.pretrained is not None else []

    def save_pretrained_files(self, folder: Path) -> None:
        """The pretrained encoder's config and tokenizer in ``folder``, so the trained model loads offline."""
        if self.pretrained is not None:
            self.pretrained.save_files(folder)


def encoder_layers(model: nn.Module) -> list[nn.Module]:
    """The stacked layers of a BERT-like encoder (``encoder.layer``), lowest first; [] when it has none."""
    encoder = getattr(model, "encoder", None)
    layers = getattr(encoder, "layer", None) or getattr(encoder, "layers", None)
    return list(layers) if layers is not None else []


class PretrainedWordEncoder(nn.Module):
    """Word vectors (B, S, width) from a pretrained encoder (see the module docstring)."""

    def __init__(self, source: str | Path, width: int, *, from_files: bool, number_pattern: re.Pattern,
                 freeze_embeddings: bool = False, freeze_layers: int = 0):
        super().__init__()
        transformers = transformers_module()
        where = "its files" if from_files else "model.pretrained"
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(source))
            if from_files:
                self.encoder = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(str(source)))
            else:
                self.encoder = transformers.AutoModel.from_pretrained(str(source))
        except (OSError, ValueError) as error:
            raise ConfigError(f"{where} {source}: cannot load a pretrained encoder and tokenizer from it: "
                              f"{str(error).splitlines()[0]}") from None
        self.encoder.train()  # from_pretrained leaves it in eval mode; the trainer switches modes from here on
        if not tokenizer.is_fast:
            raise ConfigError(f"{where} {source}: its tokenizer is a slow (Python) one; a pretrained encoder maps "
                              "words to pieces through a fast tokenizer (tokenizer.json)")
        tokenizer = self.split_words_tokenizer(transformers, tokenizer, source)
        if NUMBER_TOKEN not in tokenizer.get_vocab():  # a fresh start: one more embedding row, for the numbers
            tokenizer.add_special_tokens({"additional_special_tokens": [NUMBER_TOKEN]})
            self.encoder.resize_token_embeddings(len(tokenizer))
        self.tokenizer = tokenizer
        self.number_pattern = number_pattern
        config = self.encoder.config
        positions = getattr(config, "max_position_embeddings", None) or 512
        self.max_length = min(int(tokenizer.model_max_length or positions), positions - 2)
        hidden = config.hidden_size
        self.project = nn.Linear(hidden, width)
        if freeze_embeddings or freeze_layers:
            self.encoder.get_input_embeddings().requires_grad_(False)
            embeddings = getattr(self.encoder, "embeddings", None)
            if embeddings is not None:
                embeddings.requires_grad_(False)
        layers = encoder_layers(self.encoder)
        if freeze_layers > len(layers):
            raise ConfigError(f"model.freeze_layers is {freeze_layers}, but the encoder {source} has "
                              f"{len(layers)} layers")
        for layer in layers[:freeze_layers]:
            layer.requires_grad_(False)

    @staticmethod
    def split_words_tokenizer(transformers, tokenizer, source):
        """The tokenizer, reloaded with ``add_prefix_space`` where its pieces need it to read words one by one (the
        byte-level BPE of RoBERTa and GPT-2)."""
        try:
            tokenizer([["a", "b"]], is_split_into_words=True)
            return tokenizer
        except (ValueError, AssertionError):
            return transformers.AutoTokenizer.from_pretrained(str(source), add_prefix_space=True)

    def save_files(self, folder: Path) -> None:
        """The encoder's config and tokenizer files in ``folder`` (no weights: those are the model's)."""
        folder.mkdir(parents=True, exist_ok=True)
        self.encoder.config.save_pretrained(str(folder))
        self.tokenizer.save_pretrained(str(folder))

    def forward(self, rows: Sequence[Sequence[str]], length: int, device: torch.device) -> torch.Tensor:
        """Word vectors (B, length, width), zero past a row's words."""
        words = [[NUMBER_TOKEN if self.number_pattern.fullmatch(word) else word for word in row] or [""]
                 for row in rows]
        pieces = self.tokenizer(words, is_split_into_words=True, truncation=True, max_length=self.max_length,
                                padding=True, return_tensors="pt")
        states = self.encoder(input_ids=pieces["input_ids"].to(device),
                              attention_mask=pieces["attention_mask"].to(device)).last_hidden_state  # (B, P, D)
        first = torch.zeros(len(words), length, dtype=torch.long)  # each word's first piece
        present = torch.zeros(len(words), length, dtype=torch.bool)
        for row in range(len(words)):
            for piece, word in enumerate(pieces.word_ids(row)):
                if word is not None and word < length and not present[row, word]:
                    first[row, word], present[row, word] = piece, True
        first, present = first.to(device), present.to(device)
        gathered = states.gather(1, first[..., None].expand(-1, -1, states.size(-1)))  # (B, S, D)
        return self.project(gathered) * present[..., None].to(gathered.dtype)
