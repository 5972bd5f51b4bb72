"""A call that may block on a FIFO, run so that a hang fails the test instead of the whole run (the FIFO tests of
tests/test_run_folder_tamper.py and tests/test_paths_and_bounds.py)."""

import os
import threading

import pytest

HANG_GUARD_S = 120  # only a safety net: a reader that blocks on a FIFO is unblocked and the test fails


def without_hanging(function, *fifos):
    """``function()``'s result or exception (returned, not raised), run in a thread; if it has not returned within
    HANG_GUARD_S, the ``fifos`` get a writer that closes at once (their reader sees the end of the file) and the test
    fails."""
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["value"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    if thread.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        thread.join(HANG_GUARD_S)
        pytest.fail(f"reading hung on {', '.join(map(str, fifos)) or 'a file'}")
    return outcome["value"]
