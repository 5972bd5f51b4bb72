"""A stand-in for the Hugging Face Hub on 127.0.0.1, for the tests of models by name (tests/test_hub.py).

It keeps model repositories in memory (branches and tags pointing at commits, each commit a set of files) and
answers the few HTTP calls that ``huggingface_hub`` makes to download a snapshot and to upload a folder:

- ``GET /api/models/{repo}/revision/{revision}``: the repository's info, with the commit the revision names;
- ``GET /api/models/{repo}/tree/{revision}``: the files of that commit (one page);
- ``HEAD`` and ``GET /{repo}/resolve/{revision}/{path}``: a file, with ``X-Repo-Commit``, ``ETag`` and
  ``Content-Length``;
- ``POST /api/repos/create``, ``POST /api/models/{repo}/branch/{branch}``, ``POST /api/validate-yaml``;
- ``POST /api/models/{repo}/preupload/{revision}``: every file is uploaded "regular", inline in the commit;
- ``POST /api/models/{repo}/commit/{revision}``: the commit itself, as lines of JSON with base64 contents.

Errors are answered as the Hub answers them: a status and an ``X-Error-Code`` (``RepoNotFound``,
``RevisionNotFound``, ``EntryNotFound``) that the client turns into its own exceptions. Writes need a token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class Repository:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit id -> path -> content
    refs: dict[str, str] = field(default_factory=dict)  # branch or tag -> commit id
    private: bool = False

    def commit(self, files: dict[str, bytes], parent: str | None) -> str:
        content = json.dumps([parent, sorted((path, hashlib.sha1(data).hexdigest()) for path, data in files.items())])
        commit_id = hashlib.sha1(f"{len(self.commits)}:{content}".encode()).hexdigest()
        self.commits[commit_id] = dict(files)
        return commit_id

    def resolve(self, revision: str) -> str | None:
        """The commit a branch, tag or commit id names, or None."""
        if revision in self.refs:
            return self.refs[revision]
        return revision if revision in self.commits else None


class FakeHub:
    """The repositories and the server; ``url`` is what HF_ENDPOINT is set to. Use as a context manager."""

    def __init__(self) -> None:
        self.repositories: dict[str, Repository] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request, in order
        self.lock = threading.Lock()
        hub = self

        class Handler(RequestHandler):
            pass

        Handler.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def tag(self, repo_id: str, tag: str, revision: str = "main") -> str:
        """Tag the commit ``revision`` names; returns its id."""
        with self.lock:
            repository = self.repositories[repo_id]
            commit = repository.resolve(revision)
            repository.refs[tag] = commit
            return commit

    def files(self, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        with self.lock:
            repository = self.repositories[repo_id]
            return dict(repository.commits[repository.resolve(revision)])


def blob_id(data: bytes) -> str:
    """The id git gives a file's content (what the Hub sends as a regular file's ETag)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client expects; every answer has a Content-Length
    hub: FakeHub

    def log_message(self, format, *args) -> None:  # quiet: the tests read hub.requests instead
        pass

    # ------------------------------------------------------------------------------------------- answering

    def answer(self, status: int, body: bytes = b"", headers: dict | None = None, content_type="application/json",
               send_body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def answer_json(self, value, status: int = 200, headers: dict | None = None) -> None:
        self.answer(status, json.dumps(value).encode(), headers)

    def error(self, status: int, code: str | None, message: str, send_body: bool = True) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self.answer(status, json.dumps({"error": message}).encode(), headers, send_body=send_body)

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def authorised(self) -> bool:
        if (self.headers.get("Authorization") or "").startswith("Bearer "):
            return True
        self.error(401, None, "Invalid credentials in Authorization header")
        return False

    # ------------------------------------------------------------------------------------------- routing

    def parts(self) -> list[str]:
        path = urlsplit(self.path).path
        self.hub.requests.append((self.command, path))
        return [unquote(part) for part in path.strip("/").split("/")]

    def do_HEAD(self) -> None:
        parts = self.parts()
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve_file(parts, send_body=False)
        self.error(404, None, "not found", send_body=False)

    def do_GET(self) -> None:
        parts = self.parts()
        if parts[:2] == ["api", "models"] and len(parts) >= 5 and parts[4] in ("revision", "tree"):
            return self.model_info(parts) if parts[4] == "revision" else self.tree(parts)
        if len(parts) >= 5 and parts[2] == "resolve":
            return self.resolve_file(parts)
        self.error(404, None, "not found")

    def do_POST(self) -> None:
        parts = self.parts()
        body = self.body()
        if parts == ["api", "validate-yaml"]:
            return self.answer_json({"errors": [], "warnings": []})
        if not self.authorised():
            return None
        if parts == ["api", "repos", "create"]:
            return self.create_repository(json.loads(body))
        if parts[:2] == ["api", "models"] and len(parts) >= 6:
            action = parts[4]
            if action == "branch":
                return self.create_branch(parts, json.loads(body or b"{}"))
            if action == "preupload":
                return self.preupload(parts, json.loads(body))
            if action == "commit":
                return self.commit(parts, body)
        self.error(404, None, "not found")

    # ------------------------------------------------------------------------------------------- reading

    def repository(self, parts: list[str], send_body: bool = True) -> tuple[str, Repository | None]:
        repo_id = "/".join(parts[2:4]) if parts[0] == "api" else "/".join(parts[0:2])
        repository = self.hub.repositories.get(repo_id)
        if repository is None:
            # the Hub answers 401 to a client without a token and 404 to one with a token, both RepoNotFound
            self.error(404, "RepoNotFound", "Repository not found", send_body=send_body)
        return repo_id, repository

    def commit_of(self, repository: Repository, revision: str, send_body: bool = True) -> str | None:
        commit = repository.resolve(revision)
        if commit is None:
            self.error(404, "RevisionNotFound", "Invalid rev id: " + revision, send_body=send_body)
        return commit

    def files_at(self, parts: list[str]) -> tuple[str, Repository, str, dict] | None:
        """The repository, commit and files that ``/api/models/ORG/NAME/.../REVISION`` names; None when an error
        answer was sent. Call with the hub's lock held."""
        repo_id, repository = self.repository(parts)
        if repository is None:
            return None
        commit = self.commit_of(repository, parts[5])
        if commit is None:
            return None
        return repo_id, repository, commit, repository.commits[commit]

    def model_info(self, parts: list[str]) -> None:
        with self.hub.lock:
            found = self.files_at(parts)
            if found is None:
                return
            repo_id, repository, commit, files = found
            self.answer_json({"id": repo_id, "modelId": repo_id, "sha": commit, "private": repository.private,
                              "library_name": "neuromath", "siblings": [{"rfilename": path} for path in files]})

    def tree(self, parts: list[str]) -> None:
        with self.hub.lock:
            found = self.files_at(parts)
            if found is None:
                return
            files = found[3]
            self.answer_json([{"type": "file", "path": path, "size": len(data), "oid": blob_id(data)}
                              for path, data in sorted(files.items())])

    def resolve_file(self, parts: list[str], send_body: bool = True) -> None:
        with self.hub.lock:
            _, repository = self.repository(parts, send_body)
            if repository is None:
                return
            commit = self.commit_of(repository, parts[3], send_body)
            if commit is None:
                return
            path = "/".join(parts[4:])
            data = repository.commits[commit].get(path)
        if data is None:
            return self.error(404, "EntryNotFound", f"{path} does not exist", send_body=send_body)
        self.answer(200, data, {"X-Repo-Commit": commit, "ETag": f'"{blob_id(data)}"'},
                    content_type="application/octet-stream", send_body=send_body)

    # ------------------------------------------------------------------------------------------- writing

    def create_repository(self, request: dict) -> None:
        repo_id = f"{request['organization']}/{request['name']}"
        with self.hub.lock:
            if repo_id in self.hub.repositories:  # the Hub names the existing repository's page, as on success
                message = "You already created this model repo"
                return self.answer(409, json.dumps({"error": message, "url": f"{self.hub.url}/{repo_id}"}).encode(),
                                   {"X-Error-Message": message})
            repository = Repository(private=request.get("visibility") == "private")
            repository.refs["main"] = repository.commit({".gitattributes": b"*.safetensors filter=lfs\n"}, None)
            self.hub.repositories[repo_id] = repository
        self.answer_json({"url": f"{self.hub.url}/{repo_id}", "name": repo_id})

    def create_branch(self, parts: list[str], request: dict) -> None:
        with self.hub.lock:
            _, repository = self.repository(parts)
            if repository is None:
                return
            branch = "/".join(parts[5:])
            if branch in repository.refs:
                return self.error(409, None, f"Reference {branch} already exists")
            start = repository.resolve(request.get("startingPoint") or "main")
            repository.refs[branch] = start
        self.answer_json({})

    def preupload(self, parts: list[str], request: dict) -> None:
        with self.hub.lock:
            _, repository = self.repository(parts)
        if repository is None:
            return
        self.answer_json({"files": [{"path": item["path"], "uploadMode": "regular", "shouldIgnore": False,
                                     "oid": None} for item in request["files"]]})

    def commit(self, parts: list[str], body: bytes) -> None:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        with self.hub.lock:
            repo_id, repository = self.repository(parts)
            if repository is None:
                return
            branch = parts[5]
            parent = self.commit_of(repository, branch)
            if parent is None:
                return
            files = dict(repository.commits[parent])
            for line in lines:
                if line["key"] == "file":
                    files[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                elif line["key"] in ("deletedFile", "deletedFolder"):
                    files.pop(line["value"]["path"], None)
                elif line["key"] != "header":  # an LFS or copy operation: this hub never asks for one
                    return self.error(400, None, f"unexpected commit operation {line['key']}")
            commit = repository.commit(files, parent)
            repository.refs[branch] = commit
        self.answer_json({"commitUrl": f"{self.hub.url}/{repo_id}/commit/{commit}", "commitOid": commit,
                          "success": True})
