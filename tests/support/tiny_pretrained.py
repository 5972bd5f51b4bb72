"""Tiny BERT and RoBERTa encoders built on this machine (no download): a config of a few hundred thousand weights and
a tokenizer trained here by ``tokenizers`` on the words given, saved as a Hugging Face folder (config.json, weights,
tokenizer files) that ``model.pretrained`` can name."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

SIZES = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
         "max_position_embeddings": 130}


def tiny_encoder(folder: Path, family: str, texts: Iterable[str], seed: int = 0) -> Path:
    """A ``family`` (``bert``: WordPiece, or ``roberta``: byte-level BPE) encoder with random weights (seeded) and a
    tokenizer trained on ``texts``, saved in ``folder``."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    texts = list(texts)
    if family == "bert":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials))
        cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
        tokenizer.decoder = decoders.WordPiece()
        fast = transformers.BertTokenizerFast(tokenizer_object=tokenizer, model_max_length=128)
        config = transformers.BertConfig(vocab_size=tokenizer.get_vocab_size(), **SIZES)
    elif family == "roberta":
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        tokenizer.train_from_iterator(texts, trainers.BpeTrainer(
            vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tokenizer.post_processor = processors.RobertaProcessing(("</s>", tokenizer.token_to_id("</s>")),
                                                                ("<s>", tokenizer.token_to_id("<s>")))
        tokenizer.decoder = decoders.ByteLevel()
        fast = transformers.RobertaTokenizerFast(tokenizer_object=tokenizer, model_max_length=128,
                                                 add_prefix_space=True)
        config = transformers.RobertaConfig(vocab_size=tokenizer.get_vocab_size(), pad_token_id=1, bos_token_id=0,
                                            eos_token_id=2, **SIZES)
    else:
        raise ValueError(f"no tiny {family}")
    torch.manual_seed(seed)
    model = transformers.AutoModel.from_config(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    fast.save_pretrained(str(folder))
    return folder
