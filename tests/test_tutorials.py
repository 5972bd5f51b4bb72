"""The tutorials (docs/tutorials/*.md) run as a reader runs them: every fenced ```bash and ```python block, top to
bottom, in a fresh temporary folder per tutorial, each block must exit with status 0.

- A ```bash block runs in a shell of its own (bash with ``set -e``); the environment the blocks before it exported
  is carried through a file in the folder, so an ``export`` holds for the rest of the tutorial, as in a terminal.
  A ```python block runs with the test's python in the same environment. Other fences (text, json) show output.
- The folder stands for the checkout's root: it holds a link ``results`` to the checkout's results/. HOME is a folder
  inside it (``~/neuromath-data`` is the folder's own), NEUROMATH_DATA, proxies and Hugging Face settings are unset,
  torch runs one thread (OMP_NUM_THREADS=1), and ``neuromath`` and ``python`` are the test's own.

An HTML comment right before a block, ``<!-- test: WHAT -->``, says how the test runs it (several may stand on the
lines before a block; a reader of the site does not see them):

- ``skip, REASON``: the block is not run (it trains for hours, needs a real account, ...).
- ``add ARGS``: ARGS go at the end of each ``neuromath demo``, ``train`` and ``cv`` command of the block, to run it
  with fewer epochs or steps: the command as written, at a test's size.
- ``mirror``: each ``neuromath data get`` of the block gets ``--mirror`` to a server on 127.0.0.1 (tests never reach
  the network). It serves the corpus's files from the test's data root ($NEUROMATH_DATA; tests/conftest.py sets it
  to the shared data folder beside the checkout), found by the sha256 of the catalogue (``neuromath data list
  --json``). Where a file is missing there, the tutorial's test stops at this block, skipped with the reason.
- ``fake hub``: the block talks to tests/support/fake_hub.py on 127.0.0.1 (HF_ENDPOINT, a test token, the Hugging
  Face cache in the folder) instead of the Hugging Face Hub.
- ``background``: the block (one command: a server) starts in the background; the next block runs once
  http://127.0.0.1:PORT/api/health answers, and the server is stopped when the tutorial ends. Port 8000 in the
  tutorial's blocks is replaced by a free port.
- ``expect TEXT``: the block's output (stdout and stderr) must contain TEXT.
- ``status N,M: REASON``: the block may exit with any of these statuses (a model trained for a test's few steps may
  write no valid equation, and ``neuromath solve`` then exits with 1).

A block that calls ``curl`` where curl is not installed stops the tutorial's test there, skipped with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.fake_hub import FakeHub

from neuromath.corpora.catalogue import select

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ("solve", "train-graph2tree", "own-data", "compare", "serve")
FENCE = re.compile(r"^```(\w*)\s*$")
NOTE = re.compile(r"^<!-- test: (.+?) -->\s*$")
ADDED_TO = re.compile(r"^neuromath (demo|train|cv)\b")
DATA_GET = re.compile(r"^neuromath data get\b")
SERVED_PORT = re.compile(r"\b8000\b")
COMMENT = re.compile(r"\s+#\s.*$")
STRIPPED = ("HF_", "HUGGINGFACE_", "NEUROMATH_")
PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
BLOCK_TIMEOUT = 900


@dataclass
class Block:
    language: str
    code: str
    line: int  # of the opening fence
    notes: list[str] = field(default_factory=list)

    def note(self, name: str) -> str | None:
        """The rest of the first note that starts with ``name`` ('' for a bare name), or None."""
        for text in self.notes:
            if text == name or text.startswith(name + " ") or text.startswith(name + ","):
                return text[len(name):].lstrip(" ,")
        return None


def blocks_of(page: Path) -> list[Block]:
    """The ```bash and ```python blocks of a page, in order, with the test notes on the lines just before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, notes, number = [], [], 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if opening:
            end = next(index for index in range(number + 1, len(lines)) if lines[index].rstrip() == "```")
            if opening.group(1) in ("bash", "python"):
                blocks.append(Block(opening.group(1), "\n".join(lines[number + 1:end]) + "\n", number + 1, notes))
            notes, number = [], end + 1
            continue
        note = NOTE.match(lines[number])
        notes = [*notes, note.group(1).strip()] if note else []
        number += 1
    return blocks


def commands_with(code: str, wanted: re.Pattern, extra: str) -> str:
    """``code`` with ``extra`` at the end of each command (backslash-continued lines joined) that ``wanted`` matches
    at its start, before a trailing comment."""
    out, in_wanted, continued = [], False, False
    for line in code.splitlines():
        if not continued:
            in_wanted = bool(wanted.match(line.strip()))
        continued = line.rstrip().endswith("\\")
        if in_wanted and not continued:
            comment = COMMENT.search(line)
            body, tail = (line[:comment.start()], line[comment.start():]) if comment else (line, "")
            line = f"{body.rstrip()} {extra}{tail}"
        out.append(line)
    return "\n".join(out) + "\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def local_copy(file, root: Path) -> Path | None:
    """The file of the data root with the catalogue file's sha256: at its own path, else (same size) in its corpus's
    folder or at the top of the root, where the shared folder keeps the licences."""
    if not file.sha256:
        return None
    corpus = root / file.path.split("/")[0]
    candidates = [root / file.path, *(sorted(corpus.rglob("*")) if corpus.is_dir() else []),
                  *(sorted(root.iterdir()) if root.is_dir() else [])]
    for candidate in candidates:
        if candidate.is_file() and (file.size is None or candidate.stat().st_size == file.size) \
                and sha256_of(candidate) == file.sha256:
            return candidate
    return None


@contextmanager
def loopback_mirror(served: dict[str, Path]):
    """A server on 127.0.0.1 that answers GET of each URL path in ``served`` with that file; yields its base URL."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            path = served.get(urlsplit(self.path).path)
            if path is None:
                self.send_error(404)
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Tutorial:
    """One tutorial's folder, environment, and what its notes started (mirror, hub, server), closed at the end."""

    def __init__(self, name: str, folder: Path, stack: ExitStack):
        self.name, self.folder, self.stack = name, folder, stack
        self.state = folder / ".tutorial"
        self.state.mkdir(parents=True)
        (folder / "home").mkdir()
        (folder / "results").symlink_to(ROOT / "results", target_is_directory=True)
        self.env_file = self.state / "env"
        self.port: int | None = None
        self.hub_env: dict[str, str] = {}
        self.timings: list[str] = []
        base = {name: value for name, value in os.environ.items()
                if not name.startswith(STRIPPED) and name.lower() not in PROXIES}
        base.update(HOME=str(folder / "home"), OMP_NUM_THREADS="1", NO_PROXY="127.0.0.1,localhost",
                    PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                    PYTHONUNBUFFERED="1")
        self.env = base

    def script(self, body: str, keep_env: bool = True) -> str:
        load = f"if [ -f {shlex.quote(str(self.env_file))} ]; then . {shlex.quote(str(self.env_file))}; fi\n"
        hub = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in self.hub_env.items())
        # the exported variables, less the read-only ones (bash's own), which a later shell cannot set again
        save = f"export -p | grep -v -E '^declare -[a-zA-Z]*r' > {shlex.quote(str(self.env_file))}\n" \
            if keep_env else ""
        return f"set -e\ncd {shlex.quote(str(self.folder))}\n{load}{hub}{body}{save}"

    def mirror(self, block: Block, code: str) -> str:
        root = Path(os.environ.get("NEUROMATH_DATA", "")) if os.environ.get("NEUROMATH_DATA") else None
        names = [word for line in code.splitlines() if DATA_GET.match(line.strip())
                 for word in shlex.split(COMMENT.sub("", line))[3:] if not word.startswith("-")]
        served, missing = {}, []
        for _, files in select(names):
            for file in files:
                copy = local_copy(file, root) if root else None
                if copy is None:
                    missing.append(file.path)
                else:
                    served[urlsplit(file.url).path] = copy
        if missing:
            where = f"the data root {root}" if root else "no data root (NEUROMATH_DATA unset, no shared data folder)"
            pytest.skip(f"{self.name}.md line {block.line}: {', '.join(missing[:3])} not in {where} to mirror for "
                        "neuromath data get; the blocks before it ran")
        base = self.stack.enter_context(loopback_mirror(served))
        return commands_with(code, DATA_GET, f"--mirror {base}")

    def fake_hub(self) -> None:
        if self.hub_env:
            return
        pytest.importorskip("huggingface_hub", reason="the hub extra is not installed")
        hub = self.stack.enter_context(FakeHub())
        self.hub_env = dict(HF_ENDPOINT=hub.url, HF_HOME=str(self.state / "hf"), HF_TOKEN="hf_test_token",
                            HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1",
                            HF_HUB_DISABLE_UPDATE_CHECK="1")

    def run(self, block: Block, index: int) -> None:
        where = f"{self.name}.md line {block.line}"
        skip = block.note("skip")
        if skip is not None:
            return
        if re.search(r"^curl\b", block.code, re.MULTILINE) and shutil.which("curl") is None:
            pytest.skip(f"{where}: curl is not installed; the blocks before it ran")
        code = block.code
        if self.port is not None:
            code = SERVED_PORT.sub(str(self.port), code)
        added = block.note("add")
        if added:
            code = commands_with(code, ADDED_TO, added)
        if block.note("mirror") is not None:
            code = self.mirror(block, code)
        if block.note("fake hub") is not None:
            self.fake_hub()
        if block.note("background") is not None:
            self.background(code, where)
            return
        if block.language == "python":
            program = self.state / f"block{index}.py"
            program.write_text(code, encoding="utf-8")
            body = f"python {shlex.quote(str(program))}\n"
        else:
            body = code
        started = time.perf_counter()
        result = subprocess.run(["bash", "-c", self.script(body)], env=self.env, capture_output=True, text=True,
                                timeout=BLOCK_TIMEOUT)
        output = result.stdout + result.stderr
        self.timings.append(f"{where}: {time.perf_counter() - started:.1f} s")
        allowed = {0}
        statuses = block.note("status")
        if statuses:
            allowed |= {int(status) for status in statuses.split(":", 1)[0].split(",")}
        assert result.returncode in allowed, f"{where} exited {result.returncode}:\n{code}\n{output[-4000:]}"
        expected = block.note("expect")
        if expected:
            assert expected in output, f"{where}: {expected!r} not in its output:\n{output[-4000:]}"

    def background(self, code: str, where: str) -> None:
        log = (self.state / "server.log").open("w")
        self.stack.callback(log.close)
        server = subprocess.Popen(["bash", "-c", self.script(f"exec {code.strip()}\n", keep_env=False)],
                                  env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.stack.callback(stop, server)
        health = f"http://127.0.0.1:{self.port}/api/health"
        deadline = time.monotonic() + 300
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through a proxy
        while True:
            try:
                direct.open(health, timeout=2).close()
                return
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    text = (self.state / "server.log").read_text(encoding="utf-8", errors="replace")
                    pytest.fail(f"{where}: the server never answered {health}:\n{text[-4000:]}")
                time.sleep(0.3)


def stop(server: subprocess.Popen) -> None:
    """Stop the background server this test started, and its shell's group, by their ids."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_the_tutorial_runs_top_to_bottom(name, tmp_path):
    blocks = blocks_of(ROOT / "docs" / "tutorials" / f"{name}.md")
    assert blocks, f"{name}.md has no bash or python block"
    with ExitStack() as stack:
        tutorial = Tutorial(name, tmp_path, stack)
        if any(block.note("background") is not None for block in blocks):
            tutorial.port = free_port()
        for index, block in enumerate(blocks):
            tutorial.run(block, index)
    print("\n".join(tutorial.timings))


def test_the_notes_are_read_as_documented(tmp_path):
    page = """intro
<!-- test: skip, hours -->
<!-- test: add --set train.max_epochs=1 -->
```bash
neuromath train --config word_problems/transformer \\
    --out runs/a   # a comment
neuromath solve runs/a "x"
```
```text
not run
```
<!-- test: expect equation: -->

```python
print(1)
```
"""
    file = tmp_path / "page.md"
    file.write_text(page, encoding="utf-8")
    bash, python = blocks_of(file)
    assert bash.notes == ["skip, hours", "add --set train.max_epochs=1"] and bash.note("skip") == "hours"
    assert bash.note("add") == "--set train.max_epochs=1" and bash.note("mirror") is None
    assert python.language == "python" and python.notes == []  # a blank line parts a note from its block
    added = commands_with(bash.code, ADDED_TO, "--set train.max_epochs=1")
    assert "--out runs/a --set train.max_epochs=1   # a comment" in added
    assert 'neuromath solve runs/a "x"\n' in added
