"""Small file helpers shared by the package: atomic writes, so nothing is ever half-written (and nothing but a
regular file is replaced), several files published together, all or nothing, and write locks, so two processes
never write one run folder or output at once."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence

from filelock import SoftFileLock, Timeout

from neuromath.errors import LockedError, NeuromathError
from neuromath.safe_read import file_kind, load_json, read_data_text


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    write_atomic(path, lambda stream: stream.write(text.encode("utf-8")))


def save_figure(figure, path: str | Path, dpi: int = 100) -> None:
    """A matplotlib figure as a PNG at ``path``, written like ``write_atomic``."""
    write_atomic(path, lambda stream: figure.savefig(stream, format="png", dpi=dpi))


_UNDRAWABLE = re.compile("[\ud800-\udfff]")  # lone surrogates: the bytes of argv or a file that were not UTF-8
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")  # control characters, line and paragraph separators


def figure_text(text: object, limit: int = 200) -> str:
    """``text`` as matplotlib draws it literally, whatever it holds: a lone surrogate (a byte that was not UTF-8)
    becomes U+FFFD, a run of control characters (a line break among them) one space, ``$`` is escaped so that no
    mathtext is parsed (``$x^$`` would be an error), and text longer than ``limit`` characters is cut with an
    ellipsis. For titles, labels and tick labels made from text a user or a file gave."""
    text = _CONTROL.sub(" ", _UNDRAWABLE.sub("\ufffd", str(text)))
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text.replace("$", "\\$")


def write_atomic(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(stream)`` on a temporary file in the folder of ``path`` (created if needed), then rename it to
    ``path``: a reader sees the old file or the whole new one, never a part. See ``open_atomic``."""
    with open_atomic(path) as stream:
        write(stream)


def check_output_path(path: str | Path) -> Path:
    """``path`` as a Path, or ``NeuromathError`` when something that is not a regular file is there (a link, a FIFO,
    a device, a folder): an output only ever replaces a regular file, so ``--out /dev/full`` or a link planted in a
    run folder cannot make neuromath replace a device or write through the link to a file outside."""
    path = Path(path)
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        raise NeuromathError(f"{path} exists and is {file_kind(mode)}, not a regular file: refusing to replace it "
                             "(remove it or choose another output path)")
    return path


@contextmanager
def open_atomic(path: str | Path) -> Iterator[BinaryIO]:
    """A binary stream onto a new temporary file beside ``path``; when the block ends without an error the file is
    flushed to disk (fsync), renamed to ``path`` and the folder synced, so a reader (or a kill, or a full disk) sees
    the old file or the whole new one, never a part. On an error the temporary file is removed and ``path`` left as
    it was.

    The temporary file has a unique name made with ``O_EXCL`` (``tempfile.mkstemp``), so a link planted under a
    guessable name is never followed; ``path`` itself must be absent or a regular file (``check_output_path``).
    The folder of ``path`` is created if missing."""
    path = check_output_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~current_umask())  # mkstemp makes files private; give them the usual mode
        check_output_path(path)  # again: something may have been put there while the file was written
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    sync_folder(path.parent)


def sync_folder(folder: str | Path) -> None:
    """fsync a folder, so that a rename in it survives a power cut; a no-op where folders cannot be opened (Windows)."""
    try:
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


@contextmanager
def publish_together(targets: Sequence[str | Path], key: str | Path | None = None) -> Iterator[list[Path]]:
    """Write several output files all or nothing. The block gets one staged path per target, in a staging folder
    (``.KEY.staging.*``, unique) beside each target, and writes every file there; when it ends without an error, a
    journal ``.KEY.publish.json`` listing the renames is written (atomically), then each staged file is renamed over
    its target and the journal and staging folders removed. An error or a kill before the journal leaves the old
    outputs untouched (the staging folders are discarded by the next call); a kill after it is rolled forward by
    the next call for the same ``key`` (``finish_publishing``): a reader never gets new files beside old ones.

    ``key`` (default: the first target) names the output for the journal; give the stem the targets share, and
    hold the lock of that stem, so that two outputs writing the same files are one output. Every target must be
    absent or a regular file (``check_output_path``)."""
    targets = [check_output_path(target) for target in targets]
    key = Path(key) if key is not None else targets[0]
    finish_publishing(key, targets)
    staging: dict[Path, Path] = {}
    for folder in dict.fromkeys(target.parent for target in targets):
        folder.mkdir(parents=True, exist_ok=True)
        staging[folder] = Path(tempfile.mkdtemp(dir=folder, prefix=f".{key.name}.staging."))
    staged = [staging[target.parent] / target.name for target in targets]
    journal = key.with_name(f".{key.name}.publish.json")
    try:
        yield staged
        missing = [str(path) for path in staged if not path.is_file() or path.is_symlink()]
        if missing:
            raise NeuromathError(f"not written, so nothing was published: {', '.join(missing)}")
        for folder in staging.values():
            sync_folder(folder)
        plan = {"renames": [[str(source), str(target)] for source, target in zip(staged, targets)],
                "staging": [str(folder) for folder in staging.values()]}
        write_text_atomic(journal, json.dumps(plan, indent=1) + "\n")
    except BaseException:
        for folder in staging.values():
            remove_staging(folder)
        raise
    finish_publishing(key, targets)


def finish_publishing(key: str | Path, targets: Sequence[str | Path] = ()) -> None:
    """Complete what a killed ``publish_together`` for ``key`` left: the renames of its journal, when it wrote one
    (all its files were staged), then its staging folders, removed (beside ``key`` and beside each of ``targets``).
    Call it, holding the output's lock, before reading or writing the files of an output written together."""
    key = Path(key)
    journal = key.with_name(f".{key.name}.publish.json")
    folders = {key.parent, *(Path(target).parent for target in targets)}
    if journal.is_file() and not journal.is_symlink():
        try:
            plan = load_json(read_data_text(journal), journal)
            renames = [(Path(source), Path(target)) for source, target in plan["renames"]]
            folders.update(Path(folder).parent for folder in plan["staging"])
        except (OSError, ValueError, KeyError, TypeError, NeuromathError) as error:
            raise NeuromathError(f"{journal}: unreadable journal of an unfinished write ({error}); delete it and "
                                 "write the output again") from None
        expected = {Path(target).absolute() for target in targets}
        for source, target in renames:  # a journal only moves a staged file of this output onto one of its targets
            staged_here = (source.parent.name.startswith(f".{key.name}.staging.")
                           and source.parent.parent.absolute() == target.parent.absolute())
            if not staged_here or (expected and target.absolute() not in expected):
                raise NeuromathError(f"{journal}: names a rename ({source} -> {target}) that is not one of this "
                                     "output's; delete the journal and write the output again")
        for source, target in renames:
            if source.is_file() and not source.is_symlink():
                check_output_path(target)
                os.replace(source, target)
        for folder in {target.parent for _, target in renames}:
            sync_folder(folder)
        journal.unlink()
    for folder in folders:
        if folder.is_dir():
            for leftover in folder.glob(f".{key.name}.staging.*"):
                remove_staging(leftover)


def check_published(path: str | Path) -> None:
    """Refuse to read ``path`` while a write that publishes it together with other files was cut off between its
    renames (a ``.*.publish.json`` journal beside it names it): its files may be part old, part new. The next run of
    the command that wrote them finishes the renames (``finish_publishing``)."""
    path = Path(path)
    if not path.parent.is_dir():
        return
    for journal in path.parent.glob(".*.publish.json"):
        try:
            plan = load_json(read_data_text(journal), journal)  # a FIFO planted here: skipped, never waited on
            targets = {Path(target).name for _, target in plan["renames"]}
        except (OSError, ValueError, KeyError, TypeError, NeuromathError):
            continue  # not one of ours: publish_together refuses it when it writes
        if path.name in targets:
            raise NeuromathError(f"{path}: the write that made it was interrupted before all of its files were in "
                                 f"place ({journal.name}); run the same command again to finish it")


def remove_staging(folder: Path) -> None:
    """Remove a staging folder of ``publish_together`` and the files in it (a link is removed, not followed)."""
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink(missing_ok=True)
        return
    shutil.rmtree(folder, ignore_errors=True)


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

    A folder target that is a symbolic link (even to a folder) is refused (``NeuromathError``): every file written
    in the block would go through the link to a folder elsewhere.
    """
    target = Path(target)
    if is_folder and target.is_symlink():
        raise NeuromathError(f"{target} is a symbolic link: neuromath writes only into a folder of its own, never "
                             "through a link (give the folder the link points to, or another path)")
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
