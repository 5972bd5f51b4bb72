"""Fixtures shared by the whole test suite."""

import pytest
import torch


@pytest.fixture
def one_thread():
    """One torch CPU thread for the test, restored afterwards: tiny models run fastest on one thread, other jobs
    share the cores, and a fixed thread count keeps the summation order (and so a tiny model's training path) the
    same whatever earlier tests left behind."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
