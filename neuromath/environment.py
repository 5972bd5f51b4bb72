"""What a run ran on: the neuromath version and commit, the versions of the packages that decide its numbers, the
Python, the CPU or GPU, and the torch threads. Model cards (``RUN/README.md``) and the evidence of ``results/`` record
it, so that a number can be traced to the software and machine that made it."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

# the packages whose versions can change a measured number or the way a run folder is read
PACKAGES = ("torch", "lightning", "numpy", "sympy", "pyyaml", "safetensors")


def package_versions(names=PACKAGES) -> dict[str, str | None]:
    """name -> installed version (None when it is not installed)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit(path: str | Path | None = None) -> str | None:
    """The commit of the git checkout that holds the neuromath package (``+dirty`` when the working tree has changes),
    or None for an installed wheel or a machine without git."""
    where = Path(path) if path is not None else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit or None


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it: a container's or taskset's limit),
    else the machine's count."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else what ``platform`` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def accelerator() -> str | None:
    """The first CUDA device's name when torch sees one, else None (torch is imported only when already loaded)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception:  # a broken CUDA install must not stop a run from recording where it ran
        return None


def describe(threads: int | None = None) -> dict:
    """The environment of this process, as a JSON-ready dict."""
    from neuromath import __version__

    torch = sys.modules.get("torch")
    if threads is None and torch is not None:
        threads = torch.get_num_threads()
    return {
        "neuromath": __version__,
        "commit": git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "gpu": accelerator(),
        "threads": threads,
    }
