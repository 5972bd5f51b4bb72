"""GTS's training step against the authors' ``train_tree`` (math_seq2tree), measured side by side in one run.

Usage: ``python benchmarks/gts_vs_seq2tree.py --reference PATH [--train FILE] [--threads N] [--rounds R]
[--batches K] [--quick] [--json FILE]``

``PATH`` is a checkout of ShichaoSun/math_seq2tree, the code of "A Goal-Driven Tree-Structured Neural Model for Math
Word Problems" (Xie & Sun 2019). Its ``src.train_and_evaluate`` is imported as it is; nothing of it is kept in this
repository. The script is ``graph2tree_vs_svamp.py`` for GTS, and shares its machinery: the same problems on both
sides (``--batches`` batches from fold 0 of ``mawps-cv``, in one fixed shuffled order), their batches made by their
own ``prepare_data`` (words seen fewer than five times become UNK, as in their ``run_seq2tree.py``) and
``prepare_train_batch``, the settings taking turns round after round, medians, the epoch they give (all of the
training file, as their loop trains it) and the ratios theirs / ours.

Sizes are theirs (``run_seq2tree.py``): embeddings 128, hidden 512, two-layer Bi-GRU encoder, dropout 0.5, batch 64.
Theirs runs ``train_tree`` as written, in float32: forward, their masked cross-entropy, backward, four Adam steps, no
gradient clipping. Ours is ``word_problems/gts`` at those sizes: forward, cross-entropy, backward, clipping at 5.0,
Adam as our trainer builds it, in float32 (the preset's precision) and in bf16 autocast where the CPU has it, with
node-by-node teacher forcing (``model.tree_forcing: nodes``, ``gts_nodes``) and with ``model.tree_forcing: levels``
(the ``gts`` preset's since 2026-12-05). A GPU, where there is one, is hidden: their code moves tensors to it whenever
it sees one. Their code makes its masks with ``torch.ByteTensor``, which ``masked_fill_`` has refused since PyTorch
1.2 wanted boolean masks; the script hands their ``train_and_evaluate`` a ``torch`` whose ``ByteTensor`` makes boolean
tensors (the change the SVAMP repository made in its copy of this code), and changes nothing else.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import math
import os
import sys
import types
from pathlib import Path

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # a CPU benchmark; their code moves tensors to a GPU whenever it sees one
import torch  # noqa: E402

from neuromath.nn.precision import resolve_precision  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph2tree_vs_svamp import (  # noqa: E402  (the machinery of the Graph2Tree comparison)
    Ours,
    Reference,
    arguments,
    chosen_groups,
    compare,
    load_reference,
    prepare,
    their_pairs,
    training_file,
)

SCRIPT = "gts_vs_seq2tree.py"
CHECKOUT = "a checkout of ShichaoSun/math_seq2tree"  # what --reference names
BATCH, EMBEDDING, HIDDEN, TRIM = 64, 128, 512, 5
NEEDED = ("train_tree", "prepare_data", "prepare_train_batch", "EncoderSeq", "Prediction", "GenerateNode", "Merge")
SIZES = ["model.d_model=128", "model.encoder_hidden=512", "train.batch_size=64"]


class BooleanMasks(types.ModuleType):
    """``torch`` for their module, except that ``ByteTensor`` makes boolean tensors (masks, as PyTorch wants them)."""

    ByteTensor = staticmethod(torch.BoolTensor)

    def __getattr__(self, name: str):
        return getattr(torch, name)


class Theirs(Reference):
    """Their encoder, decoder parts and four optimisers, and their batches of the chosen problems."""

    batch_size = BATCH

    def __init__(self, module, examples, groups: list[list[int]], seed: int):
        pairs, generated, copy_nums = their_pairs(examples)
        pairs = [pair[:4] for pair in pairs]  # (words, prefix equation, numbers, positions): no quantity cells in GTS
        self.input_lang, self.output_lang, prepared, _ = module.prepare_data(pairs, [], TRIM, generated, copy_nums,
                                                                             tree=True)
        self.generate_ids = [self.output_lang.word2index[number] for number in generated]
        operators = self.output_lang.n_words - copy_nums - 1 - len(generated)
        torch.manual_seed(seed)
        self.parts = [
            module.EncoderSeq(input_size=self.input_lang.n_words, embedding_size=EMBEDDING, hidden_size=HIDDEN,
                              n_layers=2),
            module.Prediction(hidden_size=HIDDEN, op_nums=operators, input_size=len(generated)),
            module.GenerateNode(hidden_size=HIDDEN, op_nums=operators, embedding_size=EMBEDDING),
            module.Merge(hidden_size=HIDDEN, embedding_size=EMBEDDING),
        ]
        self.optimizers = [torch.optim.Adam(part.parameters(), lr=1e-3, weight_decay=1e-5) for part in self.parts]
        self.module, self.prepared, self.groups = module, prepared, groups

    def step(self, batch) -> float:
        inputs, input_lengths, outputs, output_lengths, _, num_stacks, num_positions, num_sizes = batch
        return self.module.train_tree(inputs, input_lengths, outputs, output_lengths, num_stacks, num_sizes,
                                      self.generate_ids, *self.parts, *self.optimizers, self.output_lang,
                                      num_positions)


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], CHECKOUT, 6, argv)
    module, replaced = load_reference(args.reference, SCRIPT, CHECKOUT, NEEDED)
    if getattr(module, "torch", None) is torch:
        module.torch = BooleanMasks("torch")
    train = training_file(args, SCRIPT)

    prepare(args)
    read: dict = {}
    ours = Ours(train, 0, False, read, "word_problems/gts", SIZES)
    levels = Ours(train, 0, True, read, "word_problems/gts", SIZES)
    examples = read["word_problems"]
    groups = chosen_groups(len(examples), args.batches, BATCH)
    ours.groups = levels.groups = groups
    theirs = Theirs(module, examples, groups, 0)
    preset = resolve_precision(ours.config.train.precision, "cpu")
    bf16 = resolve_precision("auto", "cpu")
    if replaced:
        print(f"placeholders for {', '.join(replaced)} (imported by the reference, used by no training step)")
    print(f"GTS training steps, {args.batches} batches of {BATCH} from {train} per measurement; {args.threads} "
          f"threads; medians of {args.rounds} rounds; our preset precision: {preset}; auto: {bf16}")
    resolved = {("theirs", "32-true"): "32-true", ("ours", "preset"): preset, ("ours", "auto"): bf16,
                ("levels", "preset"): preset, ("levels", "auto"): bf16}
    compare(args, {"theirs": theirs, "ours": ours, "levels": levels}, resolved, math.ceil(len(examples) / BATCH),
            {"placeholders": replaced, "batch_size": BATCH, "sizes": SIZES})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
