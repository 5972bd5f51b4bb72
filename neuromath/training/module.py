"""Lightning glue: sequence models (loss, validation by the task's scorer, optimiser and schedule) and equation
classifiers of the identities task (binary cross-entropy, validation accuracy, the plateau schedule)."""

from __future__ import annotations

import random
import sys
from typing import Callable

import lightning.pytorch as pl
import numpy as np
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import TQDMProgressBar

from neuromath.config import Config
from neuromath.decoding.greedy import greedy_decode
from neuromath.models.batching import move_batch
from neuromath.models.contracts import EquationClassifier, SequenceModel
from neuromath.nn.compiling import begin_graph_step
from neuromath.nn.distributed import gather_shards, process_rank, sum_over_processes
from neuromath.nn.precision import training_attention
from neuromath.text import Vocabulary


def warmup_factor(step: int, d_model: int, warmup_steps: int) -> float:
    """The schedule of Vaswani et al. (eq. 3): ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``."""
    step = max(step, 1)
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def adam(groups: list[dict], optim, trainer) -> torch.optim.Adam:
    """Adam over parameter ``groups`` (dicts with ``params`` and ``lr``) with the run's betas, eps and weight decay.
    PyTorch's fused kernel (one pass over each parameter instead of a dozen element-wise ops: 4-6x faster optimiser
    steps on the CPU) wherever it can run: every parameter a float tensor on the CPU or a CUDA device, and not
    gradient clipping under fp16 mixed precision, where the gradient scaler must unscale the gradients before they
    are clipped and a fused optimiser unscales them itself, in its step. (bf16 has no scaler: its gradients are
    clipped as they are, by ``FusedAdamClipping``.) Otherwise PyTorch's default loop, with the same update."""
    params = [p for group in groups for p in group["params"]]
    scaled = trainer is not None and str(trainer.precision).startswith("16")
    fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params) and not (
        scaled and optim.grad_clip
    )
    return torch.optim.Adam(groups, betas=optim.betas, eps=optim.eps, weight_decay=optim.weight_decay,
                            fused=fused or None)


class FusedAdamClipping:
    """Lightning module mixin: gradient clipping by norm (``optim.grad_clip``) with a fused optimiser under bf16.

    Lightning's mixed-precision plugin refuses to clip for any optimiser that unscales its own gradients, fp16 or
    bf16; the refusal guards the fp16 gradient scaler, and bf16 runs have none. Without a scaler the plugin's own
    clipping by norm runs here without that check; with one, Lightning's clipping as before."""

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        if gradient_clip_val and getattr(self.trainer.precision_plugin, "scaler", None) is None and \
                (gradient_clip_algorithm or "norm") == "norm":
            self.trainer.precision_plugin.clip_grad_by_norm(optimizer, gradient_clip_val)  # no scaler check
            return
        self.clip_gradients(optimizer, gradient_clip_val, gradient_clip_algorithm)


def unlikelihood_terms(logits: torch.Tensor, target: torch.Tensor, floor: float = 1e-6) -> torch.Tensor:
    """Per row, ``-log(1 - p + floor)``, p the probability of the row's whole target sequence (pad, 0, ignored)
    under ``logits`` (B, T, V): near p where p is small, near ``-log(floor)`` as p nears 1. The floor is added, not
    clamped to, so that a near-certain wrong answer still has a gradient that pushes it down. Sequence-level
    unlikelihood (Welleck et al. 2020, there per token): it lowers a whole wrong answer, not one token of it."""
    nll = F.cross_entropy(logits.flatten(0, 1).float(), target.flatten(), ignore_index=0,
                          reduction="none").view(target.shape).sum(dim=1)  # (B,): -log p
    return -torch.log(-torch.expm1(-nll) + floor)  # -log(1 - exp(-nll) + floor)


def cross_entropy_tokens(batch: dict) -> torch.Tensor:
    """How many target tokens of ``batch`` its cross-entropy counts: every one but padding, and none of the
    contrast rows (``unlikely``, data.contrast), which have the unlikelihood term instead."""
    counted = batch["target_out"] != 0  # (B, T)
    if "unlikely" in batch:
        counted = counted & ~batch["unlikely"][:, None]
    return counted.sum()


class RandomStatesInCheckpoint:
    """Lightning module mixin: the process's random states travel with the checkpoint so that --resume continues
    exactly (dropout included), with those of a module's own generators (``own_random_states``)."""

    def own_random_states(self) -> dict:
        """Generators of the module itself, by name: ``random.Random`` instances."""
        return {}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["random_states"] = {
            "torch": torch.get_rng_state(),
            "python": random.getstate(),
            # as plain values and a tensor, so the checkpoint loads with torch.load(weights_only=True)
            "numpy": [value.tolist() if isinstance(value, np.ndarray) else value for value in np.random.get_state()],
            "own": {name: generator.getstate() for name, generator in self.own_random_states().items()},
        }

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        states = checkpoint.get("random_states")
        if states:
            torch.set_rng_state(states["torch"])
            random.setstate(states["python"])
            name, keys, position, has_gauss, cached_gaussian = states["numpy"]
            np.random.set_state((name, np.asarray(keys, dtype=np.uint32), position, has_gauss, cached_gaussian))
            own = states.get("own", {})  # checkpoints written before these were kept have none
            for key, generator in self.own_random_states().items():
                if key in own:
                    version, internal, gauss = own[key]
                    generator.setstate((version, tuple(internal), gauss))


class SequenceModule(FusedAdamClipping, RandomStatesInCheckpoint, pl.LightningModule):
    """Trains any model of the sequence contract; validation decodes greedily and asks ``scorer``.

    ``scorer(indices, hypotheses) -> [(value_correct, equation_correct), ...]`` says, for each validation example at
    ``indices``, whether its decoded token ids are right by the task's own measure.

    In several processes (DDP) the loss of a step is the mean over the target tokens of all the processes' batches,
    and validation scores every example once (``neuromath.nn.distributed``), so that W processes train and select as
    one process with W times the batch would.
    """

    def __init__(self, config: Config, model: SequenceModel, scorer: Callable | None = None,
                 droppable_source: torch.Tensor | None = None, word_dropout: float = 0.0,
                 tokens_per_batch: float | None = None):
        super().__init__()
        self.config = config
        self.model = model
        self.scorer = scorer
        # optim.loss_denominator average: the training set's average target tokens per batch of this process, which
        # divides every batch's summed cross-entropy (None: each batch's mean over its own tokens)
        if config.optim.loss_denominator == "average" and not tokens_per_batch:
            raise ValueError("optim.loss_denominator average needs the training set's average target tokens per batch")
        self.tokens_per_batch = tokens_per_batch if config.optim.loss_denominator == "average" else None
        self.word_dropout = word_dropout  # the task's vocabulary_options; training only
        self._results: list[tuple[bool, bool]] = []  # per validation example read by this process: value, equation
        # word dropout: a bool per source id, True for the ordinary words it may replace (None: no word dropout);
        # a buffer so it follows the module to its device, not persistent so checkpoints and weights do not hold it
        self.register_buffer("droppable_source", droppable_source, persistent=False)

    def training_step(self, batch: dict, batch_index: int) -> torch.Tensor:
        batch = {**batch, "source": self.drop_words(batch["source"])}  # a copy: the loader's batch is left alone
        world = process_rank()[1]
        if self.tokens_per_batch:  # every token weighs the same whatever its batch; DDP's mean over the processes
            total = self.loss(batch, reduction="sum")  # then divides the global sum by the global average
            loss = total / self.tokens_per_batch
            logged = total.detach() / cross_entropy_tokens(batch).clamp(min=1)  # the batch's own mean, to show
        elif world == 1:
            loss = logged = self.loss(batch)
        else:  # DDP averages the processes' gradients: scale this process's sum to its share of the global mean
            total = self.loss(batch, reduction="sum")
            tokens = cross_entropy_tokens(batch)
            loss = total * world / sum_over_processes(tokens).clamp(min=1)
            logged = total.detach() / tokens.clamp(min=1)  # this process's own mean, to show
        self.log("train_loss", logged, prog_bar=True, on_step=True, on_epoch=True, batch_size=batch["source"].size(0))
        return loss

    def drop_words(self, source: torch.Tensor) -> torch.Tensor:
        """Word dropout (training only): each droppable source token becomes <unk> with probability
        ``word_dropout`` (``data.word_dropout``), so that words unseen at test time are not out of distribution. The
        draws come from torch's CPU generator (seeded by ``train.seed``, saved in checkpoints), whatever the device,
        so a resumed run drops the same words; with no word dropout nothing is drawn and ``source`` is returned as it
        is."""
        rate = self.word_dropout
        if self.droppable_source is None or rate <= 0:
            return source
        draws = torch.rand(source.shape).to(source.device)  # (B, S)
        dropped = (draws < rate) & self.droppable_source[source]  # (B, S)
        return source.masked_fill(dropped, Vocabulary.unk_id)

    def loss(self, batch: dict, reduction: str = "mean") -> torch.Tensor:
        """Cross-entropy over the target tokens (pad ignored): their mean, or their ``reduction="sum"``."""
        begin_graph_step(self.model, self.device)  # train.compile_mode reduce-overhead: a new CUDA-graph step
        with training_attention(self.device):  # bf16 on the CPU: the attention kernel whose backward is fast
            logits = self.model(batch)  # (B, T, V)
        if "unlikely" in batch:  # data.contrast: some rows' equations are pushed down
            loss = self.contrast_loss(logits, batch["target_out"], batch["unlikely"], reduction)
        else:
            loss = F.cross_entropy(
                logits.flatten(0, 1).float(),
                batch["target_out"].flatten(),
                ignore_index=0,
                label_smoothing=self.config.optim.label_smoothing,
                reduction=reduction,
            )
        # a model's auxiliary loss of this training forward (model.number_relevance), a mean: as many times the
        # target tokens under reduction="sum", so that DDP's normalisation leaves it a mean
        auxiliary = getattr(self.model, "last_auxiliary_loss", None)
        if auxiliary is not None:
            self.model.last_auxiliary_loss = None
            tokens = cross_entropy_tokens(batch) if reduction == "sum" else 1
            loss = loss + auxiliary * tokens
        return loss

    def contrast_loss(self, logits: torch.Tensor, target: torch.Tensor, unlikely: torch.Tensor,
                      reduction: str) -> torch.Tensor:
        """The loss of a batch from a training set with contrast problems (``data.contrast``): the cross-entropy of
        the other rows' target tokens plus ``optim.contrast_weight`` times the mean over the contrast rows of
        ``unlikelihood_terms``. Under ``reduction="sum"`` (DDP: ``training_step`` divides by the cross-entropy's
        tokens of all processes) the term is scaled so that the division leaves it the mean over every process's
        contrast rows; every process's batch carries ``unlikely``, so each reaches the same collectives."""
        kept = target.masked_fill(unlikely[:, None], 0)  # (B, T): the contrast rows' tokens ignored
        loss = F.cross_entropy(logits.flatten(0, 1).float(), kept.flatten(), ignore_index=0,
                               label_smoothing=self.config.optim.label_smoothing, reduction="sum")
        tokens, rows = (kept != 0).sum(), unlikely.sum()
        terms = unlikelihood_terms(logits[unlikely], target[unlikely]).sum()  # 0 for a batch without any
        weight = self.config.optim.contrast_weight
        if reduction == "mean":
            return loss / tokens.clamp(min=1) + weight * terms / rows.clamp(min=1)
        tokens, rows = sum_over_processes(tokens), sum_over_processes(rows)
        return loss + weight * terms * tokens.clamp(min=1) / rows.clamp(min=1)

    def on_validation_epoch_start(self) -> None:
        self._results = []

    def validation_step(self, batch: dict, batch_index: int) -> None:
        size = batch["source"].size(0)
        self.log("val_loss", self.loss(batch), prog_bar=True, batch_size=size, sync_dist=True)
        if self.scorer is not None:
            hypotheses = greedy_decode(self.model, batch, self.config.decode.max_len)
            self._results.extend(self.scorer(batch["index"].tolist(), hypotheses))

    def on_validation_epoch_end(self) -> None:
        if self.scorer is None:
            return
        mine = torch.tensor(self._results, dtype=torch.long, device=self.device).reshape(-1, 2)
        results = gather_shards(mine, len(self.trainer.val_dataloaders.dataset))  # (examples, 2), each once
        if len(results):
            value, equation = results.sum(dim=0).tolist()
            self.log("val_value_accuracy", value / len(results), prog_bar=True)
            self.log("val_equation_accuracy", equation / len(results))

    def configure_optimizers(self):
        optim = self.config.optim
        base_lr = 1.0 if optim.schedule == "warmup" else optim.lr
        encoder = getattr(self.model, "pretrained_parameters", list)()
        if encoder:  # a pretrained encoder: its own rate and warm-up (optim.encoder_lr, encoder_warmup_steps)
            return self.optimizers_with_encoder(encoder)
        optimizer = adam([{"params": list(self.parameters()), "lr": base_lr}], optim, self._trainer)
        if optim.schedule == "constant":
            return optimizer
        if optim.schedule == "step":  # per epoch, so a resumed run goes on with its epoch's rate
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=optim.step_epochs, gamma=optim.step_gamma)
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}
        # warmup: the config allows a sequence model no other schedule (config.rules.SCHEDULES)
        d_model, warmup = self.config.model.d_model, optim.warmup_steps
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: optim.lr_scale * warmup_factor(step + 1, d_model, warmup)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def optimizers_with_encoder(self, encoder: list) -> dict:
        """Adam over two groups, the model's own parameters at ``optim.lr`` and the pretrained encoder's at
        ``optim.encoder_lr`` (0: ``optim.lr``), both on the run's schedule, stepped per optimiser step; the encoder's
        rate also rises linearly over its first ``optim.encoder_warmup_steps`` steps. Frozen parameters are left
        out."""
        optim = self.config.optim
        mine = {id(parameter) for parameter in encoder}
        own = [p for p in self.parameters() if id(p) not in mine and p.requires_grad]
        trained = [p for p in encoder if p.requires_grad]
        d_model, warmup, trainer = self.config.model.d_model, optim.warmup_steps, self

        def schedule(step: int) -> float:  # the run's schedule, read per step (step: by the trainer's epoch)
            if optim.schedule == "warmup":
                return optim.lr_scale * warmup_factor(step + 1, d_model, warmup)
            if optim.schedule == "step":
                return optim.step_gamma ** (trainer.current_epoch // optim.step_epochs)
            return 1.0

        def encoder_schedule(step: int) -> float:
            rise = min(1.0, (step + 1) / optim.encoder_warmup_steps) if optim.encoder_warmup_steps else 1.0
            return rise * (1.0 if optim.schedule == "warmup" else schedule(step))

        base = 1.0 if optim.schedule == "warmup" else optim.lr
        groups = [(own, base, schedule), (trained, optim.encoder_lr or optim.lr, encoder_schedule)]
        groups = [group for group in groups if group[0]]  # a group with nothing to train is left out
        optimizer = adam([{"params": params, "lr": lr} for params, lr, _ in groups], optim, self._trainer)
        lambdas = [rule for _, _, rule in groups]
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambdas)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class ProgressBar(TQDMProgressBar):
    """Lightning's progress bar without the logger's version number, which means nothing here."""

    def get_metrics(self, trainer, module) -> dict:
        metrics = super().get_metrics(trainer, module)
        metrics.pop("v_num", None)
        return metrics


class EpochLines(pl.Callback):
    """One line per epoch on stderr, with the epoch's logged metrics: what a log file reads where bars would fill it
    with redraws."""

    def on_train_epoch_end(self, trainer, module) -> None:
        if not trainer.is_global_zero or trainer.sanity_checking:
            return
        metrics = {name.removesuffix("_epoch"): float(value) for name, value in trainer.callback_metrics.items()
                   if not name.endswith("_step") and getattr(value, "numel", lambda: 1)() == 1}
        shown = ", ".join(f"{name.replace('_', ' ')} {100 * value:.1f}%" if "accuracy" in name else
                          f"{name.replace('_', ' ')} {value:.4g}" for name, value in sorted(metrics.items()))
        limit = f"/{trainer.max_epochs}" if trainer.max_epochs and trainer.max_epochs > 0 else ""
        print(f"epoch {trainer.current_epoch + 1}{limit}" + (f": {shown}" if shown else ""), file=sys.stderr,
              flush=True)


def progress_callbacks(progress: bool | None) -> tuple[list, bool]:
    """The callbacks that show a run's progress, and whether Lightning's bar is on: ``train.progress`` true draws
    bars, false writes a line per epoch, null (the default) draws bars on a terminal and writes lines otherwise."""
    bars = sys.stderr.isatty() if progress is None else progress
    return ([ProgressBar()] if bars else [EpochLines()]), bars


class ClassifierModule(FusedAdamClipping, RandomStatesInCheckpoint, pl.LightningModule):
    """Equation classifiers: binary cross-entropy on the logits (plus ``train.rank_weight`` times the completion
    ranking loss of ``ranking``, neuromath.training.ranking, when given); validation accuracy (with ``ranking``:
    the validation completion MRR, ``monitor``) drives the plateau schedule (Adam, learning rate times
    ``optim.plateau_factor`` after ``optim.plateau_patience`` validations without a better score) and early stopping.
    Batches are dicts of tensors plus a ``TreeBatch``, moved by hand."""

    def __init__(self, config: Config, model: EquationClassifier, ranking=None):
        super().__init__()
        self.config = config
        self.model = model
        self.ranking = ranking  # a neuromath.training.ranking.CompletionRanking when train.rank_weight > 0
        # what selects the run and drives the plateau schedule: completion when the run is trained to complete
        self.monitor = "val_completion_mrr" if ranking is not None else "val_accuracy"
        self._right: list[torch.Tensor] = []  # per validation batch read by this process: 1 where the sign is right

    def own_random_states(self) -> dict:
        return {"ranking": self.ranking.rng} if self.ranking is not None else {}  # which groups it draws next

    def on_fit_start(self) -> None:
        # Processes of a multi-process run would draw the same groups: each draws its own from here on (rank and
        # step seed it; only rank zero's state is checkpointed, so such a resume draws new, not the same, groups).
        if self.ranking is not None and self.trainer.world_size > 1:
            self.ranking.rng.seed(f"{self.config.train.seed}:{self.global_rank}:{self.global_step}")

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        return move_batch(batch, device)

    def training_step(self, batch: dict, batch_index: int) -> torch.Tensor:
        size = batch["labels"].shape[0]
        loss = F.binary_cross_entropy_with_logits(self.model(batch), batch["labels"])
        if self.ranking is not None:
            rank_loss = self.ranking.loss(self.model, self.device)
            self.log("rank_loss", rank_loss, on_step=False, on_epoch=True, batch_size=size)
            loss = loss + self.config.train.rank_weight * rank_loss
        self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True, batch_size=size)
        return loss

    def contrast_loss(self, logits: torch.Tensor, target: torch.Tensor, unlikely: torch.Tensor,
                      reduction: str) -> torch.Tensor:
        """The loss of a batch with contrast problems (``data.contrast``): the cross-entropy of the other rows'
        target tokens, as ``loss`` takes it (mean or sum), plus ``optim.contrast_weight`` times the mean over the
        contrast rows of the unlikelihood ``unlikelihood_terms`` (under ``reduction="sum"``, as many times the other
        rows' target tokens, so that DDP's normalisation leaves it a mean)."""
        kept = target.masked_fill(unlikely[:, None], 0)  # (B, T): the contrast rows' tokens ignored
        loss = F.cross_entropy(logits.flatten(0, 1).float(), kept.flatten(), ignore_index=0,
                               label_smoothing=self.config.optim.label_smoothing, reduction="sum")
        tokens = (kept != 0).sum()
        if reduction == "mean":
            loss = loss / tokens.clamp(min=1)
        terms = unlikelihood_terms(logits[unlikely], target[unlikely])  # (U,)
        weight = self.config.optim.contrast_weight * (tokens.clamp(min=1) if reduction == "sum" else 1)
        return loss + weight * terms.mean()

    def on_validation_epoch_start(self) -> None:
        self._right = []

    def validation_step(self, batch: dict, batch_index: int) -> None:
        logits = self.model(batch)
        size = batch["labels"].shape[0]
        self.log("val_loss", F.binary_cross_entropy_with_logits(logits, batch["labels"]), batch_size=size,
                 sync_dist=True)
        self._right.append(((logits > 0).float() == batch["labels"]).long())

    def on_validation_epoch_end(self) -> None:
        mine = torch.cat(self._right) if self._right else torch.zeros(0, dtype=torch.long, device=self.device)
        right = gather_shards(mine, len(self.trainer.val_dataloaders.dataset))  # every example once
        self.log("val_accuracy", int(right.sum()) / max(1, len(right)), prog_bar=True)
        if self.ranking is not None:
            completion = self.ranking.validate(self.model)
            self.log("val_completion", completion["top1"], prog_bar=True)
            self.log("val_completion_mrr", completion["mrr"])

    def configure_optimizers(self):
        optim = self.config.optim
        optimizer = adam([{"params": list(self.model.parameters()), "lr": optim.lr}], optim, self._trainer)
        if optim.schedule == "constant":
            return optimizer
        # plateau: the config allows a classifier no other schedule (config.rules.SCHEDULES)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=optim.plateau_factor, patience=optim.plateau_patience
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": self.monitor}}
