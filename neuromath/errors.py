"""Errors raised by neuromath: one base class and a few subclasses a user can catch."""

from __future__ import annotations

from pathlib import Path


class NeuromathError(Exception):
    """Base class of every error neuromath raises on purpose."""


class ConfigError(NeuromathError):
    """A config file or override is wrong: unknown key, wrong type, bad value."""


class ExpressionError(NeuromathError):
    """An expression cannot be parsed, converted or evaluated (bad token, division by zero, ...)."""


class LockedError(NeuromathError):
    """Another process is writing the run folder, cv folder or output file (it holds the lock)."""


class MissingExtraError(NeuromathError):
    """A command needs an optional dependency that is not installed; the message names the extra that brings it."""


class DataNotFoundError(NeuromathError):
    """A data file or folder is in neither the working directory nor the data root; the message names the corpus
    when it is a known one, and where to get it."""


class DownloadError(NeuromathError):
    """A corpus could not be fetched, checked or unpacked (``neuromath data get``), or is not in the catalogue; the
    message names the URL, the file or the archive member, and why."""


class DataFormatError(NeuromathError):
    """A data file is malformed. The message names the file, the line (or row) and the reason."""

    def __init__(self, path: str | Path | None, line: int | None, reason: str):
        self.path = str(path) if path is not None else None
        self.line = line
        self.reason = reason
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self):
        # rebuilt from its three parts, so that it crosses processes (cv --jobs, results run --jobs) intact
        return type(self), (self.path, self.line, self.reason)
