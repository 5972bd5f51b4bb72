"""Small file helpers shared by the package: atomic writes, so nothing is ever half-written, and write locks, so
two processes never write one run folder or output at once."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from filelock import SoftFileLock, Timeout

from neuromath.errors import LockedError


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    write_atomic(path, lambda stream: stream.write(text.encode("utf-8")))


def save_figure(figure, path: str | Path, dpi: int = 100) -> None:
    """A matplotlib figure as a PNG at ``path``, written like ``write_atomic``."""
    write_atomic(path, lambda stream: figure.savefig(stream, format="png", dpi=dpi))


def write_atomic(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(stream)`` on a temporary file in the folder of ``path`` (created if needed), then rename it to
    ``path``: a reader sees the old file or the whole new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        os.chmod(temporary, 0o666 & ~current_umask())  # mkstemp makes files private; give them the usual mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process umask, read without changing it where the system says it (Linux); else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


HELD_LOCKS: set[Path] = set()  # the lock files this process holds, so that a nested block on one target is free


@contextmanager
def locked(target: str | Path, is_folder: bool = True) -> Iterator[Path]:
    """Hold the write lock of ``target`` for the ``with`` block, or raise ``LockedError`` naming the process and host
    that hold it. A folder (created if missing) is locked by ``TARGET/.neuromath.lock``, a file by ``.NAME.lock``
    beside it.

    The lock is a marker file holding the writer's pid and host name (filelock's SoftFileLock): a marker left by a
    process that no longer runs on this host is stale and is taken over; the marker is removed on release. A block
    nested in another on the same target of the same process goes ahead (the outer block holds the lock).
    """
    target = Path(target)
    created = is_folder and not target.exists()
    if is_folder:
        target.mkdir(parents=True, exist_ok=True)
        lock_path = target / ".neuromath.lock"
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock_path = target.with_name(f".{target.name}.lock")
    key = lock_path.resolve()
    if key in HELD_LOCKS:  # this process holds it already (an outer block): nothing more to take
        yield lock_path
        return
    lock = SoftFileLock(lock_path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise LockedError(f"{target} is being written by {lock_holder(lock_path)} (lock file {lock_path}; "
                          "delete it if that process is gone)") from None
    HELD_LOCKS.add(key)
    try:
        yield lock_path
    finally:
        HELD_LOCKS.discard(key)
        lock.release()
        if created and not any(target.iterdir()):
            target.rmdir()  # the block failed before writing anything: leave no empty folder behind


def lock_holder(lock_path: Path) -> str:
    """'process PID on host HOST', read from a lock marker (its first two lines)."""
    try:
        lines = lock_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    if len(lines) >= 2:
        return f"process {lines[0]} on host {lines[1]}"
    return "another process"
