"""Print a pip constraints file that pins every direct dependency of neuromath (the core and the extras named on the
command line) to the lower bound pyproject.toml gives it: CI installs the wheel with it, so each lower bound is a
version that has been installed and run. A dependency without a lower bound is an error: nothing would test it."""

import re
import sys
from pathlib import Path

import tomllib

project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += project["optional-dependencies"][extra]
for requirement in requirements:
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(>=|==)\s*([0-9][0-9A-Za-z.]*)(,.*)?", requirement.strip())
    if not match:
        sys.exit(f"pyproject.toml: {requirement!r} has no lower bound (>= or ==) that CI could install")
    print(f"{match.group(1)}=={match.group(4)}")
