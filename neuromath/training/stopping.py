"""Early stopping that counts from the best epoch also under ``train.min_epochs``."""

from lightning.pytorch.callbacks import EarlyStopping


class PatienceEarlyStopping(EarlyStopping):
    """Early stopping after ``patience`` validations without a better score, counted from the best one, that also
    holds under ``train.min_epochs``: Lightning's callback raises the trainer's ``should_stop`` the first time the
    patience runs out and never lowers it, so a run whose patience ran out before ``min_epochs`` stopped at
    ``min_epochs`` even when a better epoch had come in between. Here a stop signalled before ``min_epochs`` is
    withdrawn (a stop raised by another callback, such as the clock of ``train.max_time_minutes``, is left alone),
    and the next validation decides again from the count since the best epoch."""

    def _run_early_stopping_check(self, trainer) -> None:
        stopping_already = trainer.should_stop
        super()._run_early_stopping_check(trainer)
        min_epochs = trainer.fit_loop.min_epochs or 0
        if trainer.should_stop and not stopping_already and trainer.current_epoch + 1 < min_epochs:
            trainer.should_stop = False  # epochs before min_epochs: the trainer would not stop yet anyway
            self.stopped_epoch = 0
            self.stopping_reason_message = None
