"""Fetching corpora of the catalogue into the data root (``neuromath data get``), with the standard library only.

For each file: one already there with the catalogue's sha256 is kept; one there with another sha256 is refused
unless ``force`` (never silently overwritten). Otherwise the bytes go into ``PATH.part`` beside the destination; a
``.part`` left by a cut download is resumed with ``Range: bytes=N-`` (appended on 206, started again on 200). The
whole file's sha256 is checked before anything moves: a mismatch deletes the ``.part``, leaves the destination as it
was and names the file and both hashes. Then an atomic rename (``os.replace``) puts it in place, and an archive is
unpacked (``neuromath.corpora.unpack``). A file with no sha256 in the catalogue is fetched only when asked
(``unpinned``), and the sha256 received is printed so that it can be recorded. ``mirror`` replaces the scheme, host
and port of every URL and keeps its path, for a machine behind a firewall.

Progress goes to ``stream`` (stderr): redrawn in place on a terminal, one line per file otherwise.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import stat
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from neuromath.corpora.catalogue import CATALOGUE, Corpus, CorpusFile, checked_path, select
from neuromath.corpora.unpack import unpack_archive
from neuromath.errors import DownloadError

CHUNK = 1 << 20  # bytes read and written at a time
TIMEOUT = 60.0  # seconds a connection may stay silent
ATTEMPTS = 3  # tries per file within one command: a cut download resumes at once
USER_AGENT = "neuromath-data-get"
REDRAW_SECONDS = 0.25


@dataclass(frozen=True)
class Outcome:
    """What became of one file: ``status`` is ``fetched``, ``present`` (kept as it was) or ``unpacked before``;
    ``verified`` when its sha256 matched the catalogue's; ``unpacked`` when an archive was unpacked now."""

    corpus: str
    path: str
    status: str
    sha256: str | None
    verified: bool
    unpacked: bool = False

    def as_json(self) -> dict:
        return {"corpus": self.corpus, "path": self.path, "status": self.status, "sha256": self.sha256,
                "verified": self.verified, "unpacked": self.unpacked}


class Cut(Exception):
    """The connection ended before the whole file came: the ``.part`` keeps what did."""


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` with its scheme, host and port replaced by ``mirror``'s and its path kept after ``mirror``'s own path:
    ``https://raw.githubusercontent.com/a/b/c.csv`` with ``http://host:8123/pre`` is ``http://host:8123/pre/a/b/c.csv``."""
    if not mirror:
        return url
    base, original = urllib.parse.urlsplit(check_base(mirror)), urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + original.path, original.query,
                                    ""))


def check_base(mirror: str) -> str:
    parts = urllib.parse.urlsplit(mirror)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise DownloadError(f"--mirror {mirror}: must be an http:// or https:// address with a host, like "
                            "http://mirror.example.org:8080/corpora")
    return mirror


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def get_corpora(names: list[str], root: str | Path, mirror: str | None = None, force: bool = False,
                unpinned: bool = False, stream: TextIO | None = None, catalogue: tuple[Corpus, ...] = CATALOGUE,
                attempts: int = ATTEMPTS) -> list[Outcome]:
    """Fetch the corpora (or files of them) that ``names`` ask for into ``root``; see the module's description. All
    is checked first (names, paths, pins, files already there), so a refusal comes before any download."""
    stream = stream if stream is not None else sys.stderr
    root = Path(root).expanduser()
    if mirror:
        check_base(mirror)
    plan = [(corpus, file) for corpus, files in select(names, catalogue) for file in files]
    for _, file in plan:
        checked_path(file.path)
        if file.unpack:
            checked_path(file.unpack)
        if not file.url.startswith(("http://", "https://")):
            raise DownloadError(f"{file.path}: {file.url} is not an http:// or https:// address")
    loose = [file.path for _, file in plan if file.sha256 is None]
    if loose and not unpinned:
        raise DownloadError(f"{loose[0]}{f' and {len(loose) - 1} more files' if len(loose) > 1 else ''}: no sha256 "
                            "is recorded in the catalogue, so nothing can check the bytes received; --unpinned "
                            "fetches them anyway and prints the sha256 of each, to record")
    if root.exists() and not root.is_dir():
        raise DownloadError(f"the data root {root} exists and is not a folder")
    try:
        states = [present_state(root, file, force) for _, file in plan]
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file there that cannot be read, a root that cannot be made
        raise DownloadError(str(error)) from None
    outcomes = []
    for (corpus, file), state in zip(plan, states):
        try:
            outcomes.append(fetch_file(corpus, file, root, state, mirror, force, stream, attempts))
        except OSError as error:  # a full disk, a folder in the way: named with the file
            raise DownloadError(f"{file.path}: {error}") from None
    return outcomes


def summary(outcomes: list[Outcome], root: Path) -> list[str]:
    """One line per corpus: its files fetched and already there, and whether each was checked."""
    lines = []
    for name in dict.fromkeys(outcome.corpus for outcome in outcomes):
        mine = [outcome for outcome in outcomes if outcome.corpus == name]
        fetched = sum(outcome.status == "fetched" for outcome in mine)
        unchecked = sum(not outcome.verified for outcome in mine)
        check = f"{unchecked} with no pinned sha256, not checked" if unchecked else "every sha256 verified"
        lines.append(f"{name}: {fetched} file{'s' * (fetched != 1)} fetched, {len(mine) - fetched} already there, "
                     f"under {root}; {check}")
    return lines


def marker_of(root: Path, file: CorpusFile) -> Path:
    """The note an unpacked archive leaves in the folder it was unpacked into: its sha256 and top-level entries."""
    return (root / file.unpack if file.unpack else root) / f".{Path(file.path).name}.unpacked"


def read_marker(path: Path) -> dict | None:
    try:
        if not stat.S_ISREG(path.lstat().st_mode) or path.lstat().st_size > 1 << 20:
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("sha256"), str) else None


def present_state(root: Path, file: CorpusFile, force: bool) -> tuple[str, str | None]:
    """(state, sha256) of ``file`` before anything is fetched: ``unpacked`` (an archive unpacked before), ``kept``
    (there and kept: its sha256 matches, or none is pinned), ``absent`` (to fetch) or ``replace`` (there with another
    sha256, ``force`` given). A file there with another sha256 and no ``force`` is a DownloadError."""
    if file.unpack is not None and not force:
        record = read_marker(marker_of(root, file))
        if record is not None and file.sha256 in (None, record["sha256"]):
            return "unpacked", record["sha256"]
    target = root / file.path
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return "absent", None
    if not stat.S_ISREG(mode):
        raise DownloadError(f"{target} exists and is not a regular file (a link, a folder or a device): refusing to "
                            "replace it")
    have = sha256_of(target)
    if have == file.sha256 or (file.sha256 is None and not force):
        return "kept", have
    if not force:
        raise DownloadError(f"{target} is there but its sha256 is {have}, not the catalogue's {file.sha256}: "
                            "refusing to overwrite it (--force replaces it with the checked download)")
    return "replace", have


def fetch_file(corpus: Corpus, file: CorpusFile, root: Path, state: tuple[str, str | None], mirror: str | None,
               force: bool, stream: TextIO, attempts: int) -> Outcome:
    """One file of the plan: kept, or downloaded, checked and renamed into place; an archive then unpacked."""
    kind, have = state
    target = root / file.path
    pinned = file.sha256 is not None
    if kind == "unpacked":
        say(stream, f"{file.path}: unpacked before (sha256 {have}), skipped")
        return Outcome(corpus.name, file.path, "unpacked before", have, pinned)
    if kind == "kept":
        if pinned:
            say(stream, f"{file.path}: already there, sha256 verified, skipped")
        else:
            say(stream, f"{file.path}: already there and kept, unchecked: no sha256 is pinned (its sha256 is {have})")
        status, fetched = "present", False
    else:
        url = mirrored(file.url, mirror)
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        have = download(url, part, file, stream, attempts)
        if pinned and have != file.sha256:
            part.unlink()
            raise DownloadError(f"{file.path}: the bytes received from {url} have sha256 {have}, not the catalogue's "
                                f"{file.sha256}; the download was deleted and {target} left as it was")
        os.replace(part, target)
        if not pinned:
            say(stream, f"{file.path}: sha256 {have} (not pinned in the catalogue: record it to check later copies)")
        status, fetched = "fetched", True
    if file.unpack is None:
        return Outcome(corpus.name, file.path, status, have, pinned)
    into = root / file.unpack if file.unpack else root
    try:
        entries = unpack_archive(target, into, root, force=force)
    except DownloadError:
        if fetched:  # an archive refused is not kept either
            target.unlink(missing_ok=True)
        raise
    marker = marker_of(root, file)
    temporary = marker.with_name(marker.name + ".part")
    temporary.write_text(json.dumps({"archive": file.path, "sha256": have, "entries": entries}), encoding="utf-8")
    os.replace(temporary, marker)
    say(stream, f"{file.path}: unpacked into {into} ({', '.join(entries[:5])}{', ...' if len(entries) > 5 else ''})")
    return Outcome(corpus.name, file.path, status, have, pinned, unpacked=True)


def download(url: str, part: Path, file: CorpusFile, stream: TextIO, attempts: int) -> str:
    """Bring the whole of ``url`` into ``part`` (resuming what is there) and return its sha256; a cut connection is
    resumed up to ``attempts`` times, then a DownloadError says that running the command again resumes it."""
    for attempt in range(1, attempts + 1):
        try:
            transfer(url, part, file, stream)
            break
        except Cut as cut:
            if attempt == attempts:
                raise DownloadError(f"{url}: {cut}; {part} keeps the bytes received: run the command again to "
                                    "resume") from None
            say(stream, f"{file.path}: {cut}; resuming")
    return sha256_of(part)


def part_size(part: Path) -> int:
    try:
        mode = part.lstat()
    except FileNotFoundError:
        return 0
    if not stat.S_ISREG(mode.st_mode):
        raise DownloadError(f"{part} exists and is not a regular file: refusing to write through it (remove it)")
    return mode.st_size


def transfer(url: str, part: Path, file: CorpusFile, stream: TextIO) -> None:
    """One request for what ``part`` lacks of ``url``; raises Cut when the body ends early."""
    have = part_size(part)
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # nothing past the part: it may be whole already; its sha256 decides
            return
        raise DownloadError(f"{url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise DownloadError(f"{url}: cannot connect ({error.reason})") from None
    except (OSError, http.client.HTTPException) as error:
        raise DownloadError(f"{url}: cannot connect ({error})") from None
    with response:
        start, total = resumed_at(response, have)
        if start is None:
            part.unlink()
            raise Cut(f"the server answered a resume from byte {have} with another range; starting again")
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | (os.O_APPEND if start else os.O_TRUNC)
        done = start
        progress = Progress(stream, file.path, total if total is not None else file.size, start)
        with os.fdopen(os.open(part, flags, 0o644), "wb") as out:
            while True:
                try:
                    chunk = response.read(CHUNK)
                except (OSError, http.client.HTTPException) as error:  # a write error is not a cut: it propagates
                    progress.finish(done, "cut")
                    raise Cut(f"the connection was cut after {done} of {total or '?'} bytes ({error})") from None
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                if file.size is not None and done > file.size:
                    out.close()
                    part.unlink()
                    raise DownloadError(f"{url}: more than the {file.size} bytes of {file.path} came; the download "
                                        "was deleted")
                progress.update(done)
            out.flush()
            os.fsync(out.fileno())
        if total is not None and done < total:
            progress.finish(done, "cut")
            raise Cut(f"the connection was cut after {done} of {total} bytes")
        progress.finish(done, f"resumed at {human(start)}" if start else "")


def resumed_at(response, have: int) -> tuple[int | None, int | None]:
    """(the byte the body starts at, the whole file's size or None) of a response to a request from byte ``have``:
    206 continues at ``have`` (None when it names another start); 200 starts again at 0."""
    if response.status == 206:
        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", (response.headers.get("Content-Range") or "").strip())
        if match is None or int(match.group(1)) != have:
            return None, None
        return have, int(match.group(3)) if match.group(3) != "*" else None
    length = response.headers.get("Content-Length")
    return 0, int(length) if length and length.isdigit() else None


def human(count: int | None) -> str:
    if count is None:
        return "?"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def say(stream: TextIO, line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


class Progress:
    """Bytes done of the total for one file: redrawn in place at most every ``REDRAW_SECONDS`` on a terminal, else
    one line when the file ends (a log is not flooded)."""

    def __init__(self, stream: TextIO, label: str, total: int | None, start: int):
        self.stream, self.label, self.total = stream, label, total
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.drawn, self.width = 0.0, 0
        self.update(start)

    def text(self, done: int) -> str:
        return f"{self.label}: {human(done)} of {human(self.total)}"

    def update(self, done: int) -> None:
        now = time.monotonic()
        if self.tty and now - self.drawn >= REDRAW_SECONDS:
            self.draw(self.text(done), "")
            self.drawn = now

    def finish(self, done: int, note: str) -> None:
        line = self.text(done) + (f" ({note})" if note else "")
        if self.tty:
            self.draw(line, "\n")
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def draw(self, line: str, end: str) -> None:
        """``line`` over the one drawn before (padded with spaces where that was longer)."""
        self.stream.write("\r" + line.ljust(self.width) + end)
        self.stream.flush()
        self.width = len(line)
