"""Fixtures shared by the whole test suite."""

import os
import socket
import subprocess
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# The benchmark corpora are read through the data root (neuromath.dataroot): the shared folder beside the checkout
# when it is there and no other root is set. Tests that need a corpus skip, with the reason, when it is absent.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not os.environ.get("NEUROMATH_DATA") and SHARED_DATA.is_dir():
    os.environ["NEUROMATH_DATA"] = str(SHARED_DATA)

# Property tests draw the same examples on every run, so CI is never flaky; run them with fresh random examples by
# hand: python -m pytest --hypothesis-profile random -k "property or hypothesis" (and before every stop).
settings.register_profile("derandomized", derandomize=True, database=None)
settings.register_profile("random", derandomize=False)
settings.load_profile("derandomized")


@pytest.fixture
def one_thread():
    """One torch CPU thread for the test, restored afterwards: tiny models run fastest on one thread, other jobs
    share the cores, and a fixed thread count keeps the summation order (and so a tiny model's training path) the
    same whatever earlier tests left behind."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fit_teacher_forced():
    """A function that trains a sequence model on one batch by teacher forcing (cross-entropy over target_out,
    padding id 0 ignored; Adam, full batch): ``fit(model, batch, steps, lr=1e-2)`` -> (loss before, loss after)."""
    def fit(model, batch, steps, lr=1e-2):
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)

        def loss_on():
            logits = model(batch)
            return torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["target_out"].flatten(),
                                                     ignore_index=0)

        with torch.no_grad():
            start = float(loss_on())
        for _ in range(steps):
            optimizer.zero_grad()
            loss = loss_on()
            loss.backward()
            optimizer.step()
        return start, float(loss.detach())
    return fit


@pytest.fixture
def lock_held_elsewhere(tmp_path):
    """``hold(target, is_folder=True) -> pid``: mark ``target`` as being written by another live process on this
    host (a sleeping child, killed after the test), as a second neuromath command would find it."""
    children = []

    def hold(target, is_folder=True):
        target = Path(target)
        marker = target / ".neuromath.lock" if is_folder else target.with_name(f".{target.name}.lock")
        marker.parent.mkdir(parents=True, exist_ok=True)
        child = subprocess.Popen(["sleep", "600"])
        children.append(child)
        marker.write_text(f"{child.pid}\n{socket.gethostname()}\n")
        return child.pid

    yield hold
    for child in children:
        child.kill()
        child.wait()
