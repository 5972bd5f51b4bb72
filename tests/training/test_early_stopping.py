"""Early stopping under train.min_epochs (neuromath.training.stopping.PatienceEarlyStopping): the patience is counted
from the best epoch, and a patience that ran out before min_epochs does not stop a run that has found a better epoch
since."""

import lightning.pytorch as pl
import pytest
import torch
from lightning.pytorch.callbacks import EarlyStopping

from neuromath.training.stopping import PatienceEarlyStopping


class Scripted(pl.LightningModule):
    """One parameter, one training batch per epoch; validation logs the next score of ``scores``."""

    def __init__(self, scores: list[float]):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.scores = scores
        self.validations = 0

    def training_step(self, batch, batch_index):
        return (self.weight - batch[0]).pow(2).sum()

    def validation_step(self, batch, batch_index):
        pass

    def on_validation_epoch_end(self):
        if self.trainer.sanity_checking:
            return
        self.log("score", self.scores[self.validations])
        self.validations += 1

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def epochs_run(callback_class, scores, patience, min_epochs, max_epochs=20):
    module = Scripted(scores)
    callback = callback_class(monitor="score", mode="max", patience=patience)
    trainer = pl.Trainer(max_epochs=max_epochs, min_epochs=min_epochs, callbacks=[callback], logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         num_sanity_val_steps=0, accelerator="cpu")
    data = torch.utils.data.DataLoader([torch.ones(1)], batch_size=1)
    trainer.fit(module, data, data)
    return trainer.current_epoch, callback.stopped_epoch


# best at epoch 1, no better one for epochs 2-4 (patience 2 runs out at epoch 3), a new best at epoch 5, then none
SCORES = [0.5, 0.4, 0.4, 0.4, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]


def test_a_better_epoch_after_the_patience_ran_out_before_min_epochs_restarts_the_count():
    epochs, stopped = epochs_run(PatienceEarlyStopping, SCORES, patience=2, min_epochs=6)
    assert epochs == 7  # best at epoch 5, stopped two epochs later
    assert stopped == 6  # the 0-based epoch whose validation stopped it


def test_lightnings_own_callback_stops_at_min_epochs_there():
    """What PatienceEarlyStopping corrects: the stop signalled at epoch 3 sticks, so the run ends at min_epochs (6),
    one epoch after its best, without waiting out the patience."""
    epochs, _ = epochs_run(EarlyStopping, SCORES, patience=2, min_epochs=6)
    assert epochs == 6


@pytest.mark.parametrize("min_epochs, expected", [(1, 3), (3, 3), (4, 4), (5, 7), (9, 9)])
def test_the_run_stops_at_the_patience_or_at_min_epochs_whichever_is_later(min_epochs, expected):
    """Patience 2 runs out at epoch 3 (best at 1) while min_epochs allows a stop there; otherwise the count goes on
    from the best epoch seen by then (5 once epoch 5 has run), and a run past that count stops at min_epochs."""
    epochs, stopped = epochs_run(PatienceEarlyStopping, SCORES, patience=2, min_epochs=min_epochs)
    assert epochs == expected
    assert stopped == expected - 1


def test_without_a_stop_the_run_reaches_max_epochs_and_reports_no_early_stop():
    epochs, stopped = epochs_run(PatienceEarlyStopping, [0.1 * k for k in range(1, 13)], patience=2, min_epochs=6,
                                 max_epochs=8)
    assert (epochs, stopped) == (8, 0)
