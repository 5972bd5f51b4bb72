"""neuromath data list / data get (neuromath/corpora): the catalogue, checked and resumable downloads, safe unpacking.

Every download talks to a server the test starts on 127.0.0.1 (``--mirror`` points the catalogue's URLs at it). The
tests of real corpora serve the files of the shared data folder beside the checkout and skip where it is absent; the
others build their own small files and corpora, and run everywhere.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import socket
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from neuromath.cli import main
from neuromath.corpora.catalogue import CATALOGUE, Corpus, CorpusFile, select
from neuromath.corpora.download import get_corpora, mirrored
from neuromath.dataroot import CORPORA, find_data
from neuromath.errors import DataNotFoundError, DownloadError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"  # as tests/conftest.py finds it
needs_shared = pytest.mark.skipif(not (SHARED / "mawps-cv").is_dir(), reason="the shared data folder (mawps-cv and "
                                  "the other corpora's upstream files) is not beside the repository")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Loopback:
    """What the test server serves (URL path -> bytes) and how it misbehaves: ``cut_once`` sends only the first N
    bytes of a path's body once, then drops the connection; ``ignore_range`` answers a Range request with the whole
    file (200). ``requests`` records (path, Range header) of every request."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.cut_once: dict[str, int] = {}
        self.ignore_range: set[str] = set()
        self.requests: list[tuple[str, str | None]] = []
        self.base = ""

    def serve(self, url: str, data: bytes) -> None:
        self.files[urlsplit(url).path] = data


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        state: Loopback = self.server.state
        path = urlsplit(self.path).path
        asked = self.headers.get("Range")
        state.requests.append((path, asked))
        body = state.files.get(path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        if asked and path not in state.ignore_range:
            start = int(re.fullmatch(r"bytes=(\d+)-", asked).group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = state.cut_once.pop(path, None)
        if cut is not None:
            self.wfile.write(body[start:start + cut])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body[start:])

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    state = Loopback()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.state = state
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def shared_file(file: CorpusFile) -> Path:
    """The shared copy of a catalogue file: at its path, or (a repository's licence) by its name at the top."""
    here = SHARED / file.path
    if here.is_file():
        return here
    return SHARED / ("LICENSE-Tree-SMU-repo" if file.path.endswith("/LICENSE") else Path(file.path).name)


def serve_shared(state: Loopback, name: str) -> Corpus:
    corpus = next(corpus for corpus in CATALOGUE if corpus.name == name)
    for file in corpus.files:
        state.serve(file.url, shared_file(file).read_bytes())
    return corpus


def tiny(files: list[tuple[str, bytes]], unpack: str | None = None, pinned: bool = True,
         wrong: bool = False) -> Corpus:
    """A corpus ``tiny`` of the given (path, bytes), URLs on a host the mirror replaces."""
    entries = tuple(CorpusFile(f"https://example.org/files/{path}", path,
                               (sha256(b"other" + data) if wrong else sha256(data)) if pinned else None,
                               len(data), unpack) for path, data in files)
    return Corpus("tiny", "a test corpus", "the test", "none", "a few bytes", entries)


def fetch(corpus: Corpus, root: Path, state: Loopback, **options):
    stream = io.StringIO()
    outcomes = get_corpora([corpus.name], root, mirror=state.base, catalogue=(corpus,), stream=stream, **options)
    return outcomes, stream.getvalue()


def files_under(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file() or path.is_symlink())


# ------------------------------------------------------------------------------------------------- the catalogue


def test_the_catalogue_names_every_documented_corpus_in_the_presets_layout():
    names = [corpus.name for corpus in CATALOGUE]
    assert names == ["mawps-cv", "asdiv-a-cv", "svamp", "mawps-json", "math23k", "identities", "symbolic",
                     "mathematics_dataset-v1.0"]
    assert set(names) <= set(CORPORA)  # the folders dataroot names
    for corpus in CATALOGUE:
        for file in corpus.files:
            assert file.url.startswith("https://") and not Path(file.path).is_absolute() and ".." not in file.path
            assert file.path.split("/")[0] == corpus.name or file.unpack == ""  # an archive of the root
            assert file.sha256 is None or re.fullmatch("[0-9a-f]{64}", file.sha256)
    paths = {file.path for corpus in CATALOGUE for file in corpus.files}
    for path in ("mawps-cv/fold0/train.csv", "asdiv-a-cv/fold4/dev.csv", "identities/candidate_classes.json",
                 "identities/40k_test_blank_0.json", "mawps-json/MAWPS.json", "math23k/testset.json",
                 "identities/released/exp_lstm_drop0.1_hidden50_12093-model-68.checkpoint"):
        assert path in paths
    upstream = {file.path: file.url for corpus in CATALOGUE for file in corpus.files}
    assert upstream["mawps-cv/fold0/train.csv"].endswith("/arkilpatel/SVAMP/main/data/cv_mawps/fold0/train.csv")
    pinned = {corpus.name: corpus.pinned for corpus in CATALOGUE}
    assert pinned == {"mawps-cv": "all", "asdiv-a-cv": "all", "svamp": "some", "mawps-json": "all",
                      "math23k": "all", "identities": "all", "symbolic": "none", "mathematics_dataset-v1.0": "none"}


@needs_shared
def test_the_pinned_sha256_are_those_of_the_shared_upstream_files():
    checked = 0
    for corpus in CATALOGUE:
        for file in corpus.files:
            if file.sha256 is None or not shared_file(file).is_file():
                continue
            data = shared_file(file).read_bytes()
            assert (sha256(data), len(data)) == (file.sha256, file.size), file.path
            checked += 1
    assert checked == sum(file.sha256 is not None for corpus in CATALOGUE for file in corpus.files)


def test_data_list_json_gives_each_corpus_with_its_files(capsys):
    assert main(["data", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [entry["name"] for entry in listed] == [corpus.name for corpus in CATALOGUE]
    for entry in listed:
        assert {"name", "source", "licence", "files"} <= set(entry)
        for file in entry["files"]:
            assert {"url", "sha256", "path"} <= set(file) and not file["path"].startswith("/")
    assert main(["data", "list"]) == 0
    table = capsys.readouterr().out
    assert "| mawps-cv | github.com/arkilpatel/SVAMP" in table and "not pinned" in table


def test_a_name_selects_a_corpus_or_files_of_one_with_its_licence():
    (corpus, files), = select(["symbolic/prim_bwd.tar.gz"])
    assert [file.path for file in files] == ["symbolic/prim_bwd.tar.gz", "symbolic/LICENSE-SymbolicMathematics-repo"]
    (corpus, files), = select(["mawps-cv/fold1", "mawps-cv"])
    assert len(files) == len(corpus.files)


def test_the_mirror_keeps_the_path():
    url = "https://raw.githubusercontent.com/a/b/c.csv"
    assert mirrored(url, "http://127.0.0.1:8123") == "http://127.0.0.1:8123/a/b/c.csv"
    assert mirrored(url, "http://host/prefix/") == "http://host/prefix/a/b/c.csv"
    with pytest.raises(DownloadError, match="--mirror"):
        mirrored(url, "file:///srv/mirror")


def test_a_missing_corpus_file_names_the_command_that_fetches_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "root"))
    with pytest.raises(DataNotFoundError) as error:
        find_data("mawps-cv/fold0/train.csv")
    assert "`neuromath data get mawps-cv` fetches it" in str(error.value) and "docs/data.md" in str(error.value)
    with pytest.raises(DataNotFoundError) as error:
        find_data("md4/train-easy", tmp_path / "root")  # generated, not downloaded: no command to name
    assert "data get" not in str(error.value)


# ---------------------------------------------------------------------------------------------- real corpora


@needs_shared
@pytest.mark.parametrize("name", ["mawps-cv", "asdiv-a-cv", "mawps-json", "math23k", "identities"])
def test_get_fetches_a_whole_corpus_checked_and_a_second_run_keeps_it(tmp_path, server, capsys, name):
    corpus = serve_shared(server, name)
    root = tmp_path / "root"
    assert main(["data", "get", name, "--root", str(root), "--mirror", f"{server.base}/"]) == 0
    captured = capsys.readouterr()
    count = len(corpus.files)
    assert f"{name}: {count} files fetched, 0 already there" in captured.out
    assert "every sha256 verified" in captured.out
    for file in corpus.files:
        assert sha256((root / file.path).read_bytes()) == file.sha256
    assert files_under(root) == sorted(file.path for file in corpus.files)  # no .part left
    assert find_data(corpus.files[0].path, root) == root / corpus.files[0].path
    served = len(server.requests)
    assert main(["data", "get", name, "--root", str(root), "--mirror", server.base, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {file["status"] for file in result["files"]} == {"present"} and len(server.requests) == served


def test_an_unknown_name_lists_the_known_ones(capsys, tmp_path):
    assert main(["data", "get", "mawps", "--root", str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "did you mean mawps-cv" in error
    assert all(corpus.name in error for corpus in CATALOGUE)
    assert list(tmp_path.iterdir()) == []


def test_a_404_and_a_refused_connection_are_one_line_naming_the_url(capsys, tmp_path, server):
    assert main(["data", "get", "mawps-json", "--root", str(tmp_path), "--mirror", server.base]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{server.base}/LYH-YF/MWPToolkit/master/dataset/mawps/MAWPS.json" in error
    assert "HTTP 404" in error and files_under(tmp_path) == []
    with socket.socket() as probe:  # a port no one listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["data", "get", "mawps-json", "--root", str(tmp_path), "--mirror", f"http://127.0.0.1:{port}"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"http://127.0.0.1:{port}/LYH-YF" in error and "cannot connect" in error


# ------------------------------------------------------------------------------------------ resume and checks


def test_a_cut_download_is_resumed_with_a_range_request(tmp_path, server):
    data = os.urandom(300_000)
    corpus = tiny([("tiny/big.bin", data)])
    server.serve(corpus.files[0].url, data)
    server.cut_once["/files/tiny/big.bin"] = 100_000
    root = tmp_path / "root"
    with pytest.raises(DownloadError, match="run the command again to resume"):
        fetch(corpus, root, server, attempts=1)
    part = root / "tiny" / "big.bin.part"
    assert part.stat().st_size == 100_000 and not (root / "tiny" / "big.bin").exists()
    outcomes, said = fetch(corpus, root, server)  # the next run
    assert server.requests[-1] == ("/files/tiny/big.bin", "bytes=100000-")
    assert (root / "tiny" / "big.bin").read_bytes() == data and not part.exists()
    assert outcomes[0].status == "fetched" and outcomes[0].verified and "resumed at" in said
    assert said.count("tiny/big.bin: ") == 1  # not a terminal: one progress line per file


def test_a_cut_within_one_run_resumes_at_once(tmp_path, server):
    data = os.urandom(200_000)
    corpus = tiny([("tiny/a.bin", data)])
    server.serve(corpus.files[0].url, data)
    server.cut_once["/files/tiny/a.bin"] = 50_000
    fetch(corpus, tmp_path, server)
    assert [asked for _, asked in server.requests] == [None, "bytes=50000-"]
    assert (tmp_path / "tiny" / "a.bin").read_bytes() == data


def test_a_server_that_ignores_the_range_starts_the_file_again(tmp_path, server):
    data = os.urandom(10_000)
    corpus = tiny([("tiny/a.bin", data)])
    server.serve(corpus.files[0].url, data)
    server.ignore_range.add("/files/tiny/a.bin")
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "a.bin.part").write_bytes(b"stale bytes of another file")
    fetch(corpus, tmp_path, server)
    assert server.requests[-1][1] == "bytes=27-"
    assert (tmp_path / "tiny" / "a.bin").read_bytes() == data and files_under(tmp_path) == ["tiny/a.bin"]


def test_bytes_with_another_sha256_are_refused_and_the_destination_left_as_it_was(tmp_path, server):
    data = b"the right bytes\n"
    corpus = tiny([("tiny/a.csv", data)], wrong=True)
    server.serve(corpus.files[0].url, data)
    with pytest.raises(DownloadError) as error:
        fetch(corpus, tmp_path, server)
    message = str(error.value)
    assert "tiny/a.csv" in message and corpus.files[0].sha256 in message and sha256(data) in message
    assert files_under(tmp_path) == []  # no .part, nothing in place
    (tmp_path / "tiny" / "a.csv").write_bytes(b"mine")  # with --force, a mismatch still leaves it
    with pytest.raises(DownloadError):
        fetch(corpus, tmp_path, server, force=True)
    assert (tmp_path / "tiny" / "a.csv").read_bytes() == b"mine" and files_under(tmp_path) == ["tiny/a.csv"]


def test_a_file_there_is_kept_when_right_and_refused_when_not_unless_force(tmp_path, server):
    data = b"Question,Equation\n"
    corpus = tiny([("tiny/a.csv", data)])
    server.serve(corpus.files[0].url, data)
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "a.csv").write_bytes(data)
    outcomes, said = fetch(corpus, tmp_path, server)
    assert outcomes[0].status == "present" and "sha256 verified, skipped" in said and server.requests == []
    (tmp_path / "tiny" / "a.csv").write_bytes(b"edited")
    with pytest.raises(DownloadError, match="refusing to overwrite it"):
        fetch(corpus, tmp_path, server)
    assert (tmp_path / "tiny" / "a.csv").read_bytes() == b"edited" and server.requests == []
    fetch(corpus, tmp_path, server, force=True)
    assert (tmp_path / "tiny" / "a.csv").read_bytes() == data


def test_a_file_with_no_pinned_sha256_needs_unpinned_and_its_sha256_is_printed(tmp_path, server):
    data = b"unvouched\n"
    corpus = tiny([("tiny/a.txt", data)], pinned=False)
    server.serve(corpus.files[0].url, data)
    with pytest.raises(DownloadError, match="--unpinned"):
        fetch(corpus, tmp_path, server)
    assert server.requests == [] and files_under(tmp_path) == []
    outcomes, said = fetch(corpus, tmp_path, server, unpinned=True)
    assert f"tiny/a.txt: sha256 {sha256(data)}" in said and not outcomes[0].verified


# -------------------------------------------------------------------------------------------------- archives


def archive(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))
    return buffer.getvalue()


def special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_an_archive_is_unpacked_after_its_check_and_not_again(tmp_path, server):
    data = archive([("pairs/prim.train", b"1|x\ty\n"), ("pairs/prim.test", b"1|z\tw\n")])
    corpus = tiny([("tiny/pairs.tar.gz", data)], unpack="tiny")
    server.serve(corpus.files[0].url, data)
    outcomes, said = fetch(corpus, tmp_path, server)
    assert outcomes[0].unpacked and (tmp_path / "tiny" / "pairs" / "prim.train").read_bytes() == b"1|x\ty\n"
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".unpacking")]
    served = len(server.requests)
    (tmp_path / "tiny" / "pairs.tar.gz").unlink()  # the archive may go once unpacked
    outcomes, said = fetch(corpus, tmp_path, server)
    assert outcomes[0].status == "unpacked before" and len(server.requests) == served


@pytest.mark.parametrize("bad, why", [
    (("../evil.txt", b"outside"), ".."),
    (("/abs/evil.txt", b"outside"), "absolute"),
    (special("link", tarfile.SYMTYPE, "/etc/passwd"), "symbolic link"),
    (special("hard", tarfile.LNKTYPE, "ok.txt"), "hard link"),
    (special("device", tarfile.CHRTYPE), "device"),
    (special("pipe", tarfile.FIFOTYPE), "FIFO"),
])
def test_an_archive_with_a_member_outside_its_folder_or_not_a_plain_file_is_refused_whole(tmp_path, server, bad, why):
    data = archive([("ok.txt", b"fine"), bad])
    corpus = tiny([("tiny/bad.tar.gz", data)], unpack="tiny")
    server.serve(corpus.files[0].url, data)
    root = tmp_path / "root"
    with pytest.raises(DownloadError) as error:
        fetch(corpus, root, server)
    message = str(error.value)
    name = bad[0] if isinstance(bad, tuple) else bad.name
    assert "tiny/bad.tar.gz" in message and repr(name) in message and why in message
    assert files_under(root) == []  # nothing unpacked, the refused archive gone, no staging folder
    assert [path.name for path in root.iterdir() if path.name.startswith(".")] == []
    assert not (tmp_path / "evil.txt").exists() and not (root / "evil.txt").exists()
