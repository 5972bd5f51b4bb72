"""The demo's choice of torch threads: the cores other work leaves free, at least one, at most two."""

from neuromath.environment import usable_cpus
from neuromath.experiments.demo_run import MAX_DEMO_THREADS, busy_cores, demo_threads


def test_demo_threads_leave_busy_cores_alone():
    assert MAX_DEMO_THREADS == 2
    assert demo_threads(2, 0.05) == 2  # an idle two-core machine
    assert demo_threads(2, 0.9) == 1  # one core held by other work
    assert demo_threads(2, 2.0) == 1  # every core busy: still one thread
    assert demo_threads(16, 3.0) == 2  # many free cores: the demo's small model takes two
    assert demo_threads(1, 0.0) == 1
    assert demo_threads(4, None) == 2  # the load could not be read: as if idle


def test_busy_cores_is_a_share_of_the_usable_cpus():
    busy = busy_cores(0.05)
    assert busy is None or 0.0 <= busy <= usable_cpus() + 1e-9
