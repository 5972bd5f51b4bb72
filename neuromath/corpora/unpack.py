"""Unpacking a downloaded tar archive, once its sha256 is checked, without trusting its member names.

Every member is checked before it is written: an absolute path, a ``..`` part, a symbolic or hard link, a device
file or a FIFO refuses the whole archive with an error naming the archive and the member. Members are unpacked into a
fresh folder inside the data root (Python's ``data`` extraction filter on top, where this Python has it) and only
when all are unpacked are their top-level entries renamed into place; on any refusal or error that folder is removed,
so nothing of the archive is left behind.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from neuromath.errors import DownloadError

FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12 and 3.11.4
FILTER_ERROR = getattr(tarfile, "FilterError", ())


def member_problem(member: tarfile.TarInfo) -> str | None:
    """Why ``member`` may not be unpacked, or None: only plain files and folders inside the archive's folder may."""
    name = member.name
    if name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "has an absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "leads out of the folder it is unpacked into (..)"
    if member.issym():
        return f"is a symbolic link (to {member.linkname!r})"
    if member.islnk():
        return f"is a hard link (to {member.linkname!r})"
    if member.ischr() or member.isblk():
        return "is a device file"
    if member.isfifo():
        return "is a FIFO"
    if not (member.isfile() or member.isdir()):
        return "is neither a regular file nor a folder"
    return None


def unpack_archive(archive: Path, into: Path, root: Path, force: bool = False) -> list[str]:
    """Unpack the tar archive ``archive`` (gzip or not) into the folder ``into`` through a temporary folder inside
    ``root``; return the top-level entries it put there. An entry that already exists in ``into`` is refused unless
    ``force`` (then it is replaced). A refused archive leaves ``into`` as it was."""
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=root))
    try:
        extract_checked(archive, staging)
        entries = sorted(os.listdir(staging))
        existing = [name for name in entries if os.path.lexists(into / name)]
        if existing and not force:
            raise DownloadError(f"{archive}: {into / existing[0]} already exists; refusing to unpack over it "
                                "(--force replaces it)")
        into.mkdir(parents=True, exist_ok=True)
        for name in entries:
            target = into / name
            if os.path.lexists(target):
                remove(target)
            os.replace(staging / name, target)
        return entries
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def extract_checked(archive: Path, staging: Path) -> None:
    """Every member of ``archive`` into ``staging``, each checked by ``member_problem`` before it is written."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                problem = member_problem(member)
                if problem is not None:
                    raise DownloadError(f"{archive}: member {member.name!r} {problem}; refusing the archive "
                                        "(nothing of it was unpacked)")
                tar.extract(member, staging, **FILTER)
    except FILTER_ERROR as error:  # the data filter's own refusal: absolute modes, odd names
        name = error.tarinfo.name if error.tarinfo is not None else "?"
        raise DownloadError(f"{archive}: member {name!r} refused ({error}); nothing of it was unpacked") from None
    except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
        raise DownloadError(f"{archive}: cannot unpack it ({error}); nothing of it was unpacked") from None


def remove(path: Path) -> None:
    """Remove ``path``: a folder with its contents, anything else (a link included, never followed) by unlinking."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
