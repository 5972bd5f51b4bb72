"""Fixtures shared by the whole test suite."""

import pytest
import torch
from hypothesis import settings

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
