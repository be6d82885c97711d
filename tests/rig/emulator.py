"""Runs the `emulate` GitHub REST API emulator (npm emulate@0.11.2) for the tests.

One emulator per pytest session (start-up costs about a second); isolation between tests
comes from a fresh repository per test (:class:`RepoHandle`) and a fresh token alias per
consumer, because the emulator enforces 5000 requests/hour *per token* and a whole suite
sharing one token would run out halfway through.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests
import yaml
from github import Auth, Github
from github.Repository import Repository

from . import PATIENCE

TESTS_DIR = Path(__file__).resolve().parents[1]
SEED = Path(__file__).with_name("seed.yaml")
EMULATE_JS = TESTS_DIR / "node_modules" / "emulate" / "dist" / "index.js"

try:  # so a killed pytest cannot leave an orphaned emulator listening forever
    _prctl: Any = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover - not Linux
    _prctl = None


def _die_with_parent() -> None:
    if _prctl is not None:
        _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Emulator:
    """``with Emulator() as emu: emu.url`` -- the emulator on a free port, ready to answer."""

    BOT_TOKEN = "bot_token"
    OUTSIDER_TOKEN = "outsider_token"
    OWNER = "orion-bot"
    OUTSIDER = "mallory"

    def __init__(self, seed: str | os.PathLike[str] | None = None, *, token_pool: int = 512,
                 startup_timeout: float = PATIENCE) -> None:
        self.seed = Path(seed or SEED)
        self.token_pool = token_pool
        self.startup_timeout = startup_timeout
        self.port = 0
        self.url = ""
        self.tokens: dict[str, str] = {}  # public token -> login
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: str | None = None
        self._nonce = f"rig-{uuid.uuid4().hex[:12]}"
        self._leases = itertools.count()
        self._lock = threading.Lock()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Emulator:
        node = shutil.which("node")
        if node is None or not EMULATE_JS.exists():
            raise RuntimeError(f"need node and {EMULATE_JS} (npm ci --prefix tests)")
        self._dir = tempfile.mkdtemp(prefix="orion-emulate-")
        seed = self._write_seed()
        log = ""
        for _ in range(5):  # another process may grab the port between probe and bind
            port = free_port()
            log_path = Path(self._dir, f"emulate-{port}.log")
            with open(log_path, "wb") as out:
                self._proc = subprocess.Popen(
                    [node, str(EMULATE_JS), "start", "-s", "github", "-p", str(port),
                     "--seed", str(seed)], cwd=TESTS_DIR, stdin=subprocess.DEVNULL,
                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=_die_with_parent)
            if self._wait_ready(port):
                self.port, self.url = port, f"http://localhost:{port}"
                return self
            self._kill()
            log = log_path.read_text(errors="replace")[-2000:]
            if "EADDRINUSE" not in log:
                break
        self.stop()
        raise RuntimeError(f"emulate did not become ready; its output:\n{log}")

    def _write_seed(self) -> Path:
        """The seed plus token aliases and a unique user that identifies this instance."""
        assert self._dir is not None
        data = yaml.safe_load(self.seed.read_text()) or {}
        tokens = data.setdefault("tokens", {}) or {}
        self.tokens = {tok: spec["login"] for tok, spec in tokens.items()}
        for tok, spec in list(tokens.items()):
            for i in range(self.token_pool):
                tokens[f"{tok}-rig{i:04d}"] = dict(spec)
        data["tokens"] = tokens
        data.setdefault("github", {}).setdefault("users", []).append({"login": self._nonce})
        path = Path(self._dir, "seed.yaml")
        path.write_text(json.dumps(data, indent=1))  # JSON is YAML, and has no aliases
        return path

    def _wait_ready(self, port: int) -> bool:
        """Poll until *our* emulator answers: the nonce user exists only in its seed."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                return False
            try:
                resp = requests.get(f"http://localhost:{port}/users/{self._nonce}", timeout=2,
                                    headers={"Authorization": f"token {self.BOT_TOKEN}"})
                if resp.status_code == 200:
                    return True
            except requests.RequestException:
                pass
            time.sleep(0.05)
        return False

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        proc.wait()

    def stop(self) -> None:
        """Kill the emulator's whole process group and remove its temporary files."""
        self._kill()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def lease_tokens(self) -> dict[str, str]:
        """A fresh alias (same login, own rate-limit counter) of every seeded token."""
        with self._lock:
            i = next(self._leases) % self.token_pool
        return {tok: f"{tok}-rig{i:04d}" for tok in self.tokens}

    def request(self, method: str, path: str, token: str | None = BOT_TOKEN,
                **kwargs: Any) -> requests.Response:
        """One request straight to the emulator (no proxy, so no faults)."""
        headers = {"Accept": "application/vnd.github+json", **kwargs.pop("headers", {})}
        if token is not None:
            headers["Authorization"] = f"token {token}"
        kwargs.setdefault("timeout", 10)
        return requests.request(method, self.url + path, headers=headers, **kwargs)

    def create_repo(self, name: str, token: str = BOT_TOKEN) -> str:
        """Create ``OWNER/name`` and return its full name."""
        resp = self.request("POST", "/user/repos", token, json={"name": name})
        _check(resp)
        return resp.json()["full_name"]


def _check(resp: requests.Response) -> requests.Response:
    if resp.status_code >= 400:
        raise AssertionError(f"{resp.request.method} {resp.url} -> {resp.status_code}: "
                             f"{resp.text[:500]}")
    return resp


def unique_repo_name(hint: str) -> str:
    """A repository name derived from the test's name, unique per call."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", hint).strip("-.")[:60] or "test"
    return f"{base}-{uuid.uuid4().hex[:8]}"


class RepoHandle:
    """A fresh repository for one test.

    ``gh``/``repository`` are PyGithub objects bound *through the proxy* as the bot, for
    exercising the rig. Every other method talks to the emulator *directly*, so setup and
    assertions are not hit by injected faults and do not appear in the proxy's log.
    """

    def __init__(self, emulator: Emulator, full_name: str, api_url: str) -> None:
        self.emulator, self.full_name, self.api_url = emulator, full_name, api_url
        self.owner, self.name = full_name.split("/", 1)
        self._tokens = emulator.lease_tokens()  # own alias: polling costs its own budget
        self._clients: list[Github] = []
        self.gh = self.client()
        # Not fetched (a test's request log starts empty); the rest completes on first use.
        self.repository = Repository(self.gh.requester, {}, {
            "url": f"{api_url}/repos/{full_name}", "full_name": full_name, "name": self.name,
            "owner": {"login": self.owner}}, completed=False)

    @classmethod
    def create(cls, emulator: Emulator, api_url: str, hint: str = "test") -> RepoHandle:
        return cls(emulator, emulator.create_repo(unique_repo_name(hint)), api_url)

    def client(self, token: str = Emulator.BOT_TOKEN, **kwargs: Any) -> Github:
        """A PyGithub client through the proxy: no retries, no throttling, 10 s timeout."""
        options: dict[str, Any] = dict(base_url=self.api_url, retry=None, timeout=10,
                                       seconds_between_requests=0, seconds_between_writes=0)
        gh = Github(auth=Auth.Token(token), **{**options, **kwargs})
        self._clients.append(gh)
        return gh

    def dispose(self) -> None:
        for gh in self._clients:
            gh.close()
        self._clients.clear()

    def api(self, method: str, path: str, token: str = Emulator.BOT_TOKEN, **kw: Any) -> Any:
        """Direct request on ``/repos/{full_name}{path}``; the decoded JSON (None if empty)."""
        resp = _check(self.emulator.request(method, f"/repos/{self.full_name}{path}",
                                            self._tokens.get(token, token), **kw))
        return resp.json() if resp.content else None

    def create_issue(self, title: str, labels: list[str] | tuple[str, ...] = (),
                     body: str = "") -> int:
        data = {"title": title, "body": body, "labels": list(labels)}
        return self.api("POST", "/issues", json=data)["number"]

    def issue(self, n: int) -> dict[str, Any]:
        return self.api("GET", f"/issues/{n}")

    def labels(self, n: int) -> list[str]:
        return [label["name"] for label in self.issue(n)["labels"]]

    def add_label(self, n: int, *names: str) -> None:
        self.api("POST", f"/issues/{n}/labels", json={"labels": list(names)})

    def remove_label(self, n: int, name: str) -> None:
        self.api("DELETE", f"/issues/{n}/labels/{quote(name, safe='')}")

    def close(self, n: int) -> None:
        self.api("PATCH", f"/issues/{n}", json={"state": "closed"})

    def reopen(self, n: int) -> None:
        self.api("PATCH", f"/issues/{n}", json={"state": "open"})

    def comments(self, n: int) -> list[dict[str, Any]]:
        """Every comment on issue n, oldest first: id, user (login), body, timestamps."""
        out: list[dict[str, Any]] = []
        for page in itertools.count(1):
            batch = self.api("GET", f"/issues/{n}/comments",
                             params={"per_page": 100, "page": page})
            out += [{"id": c["id"], "user": c["user"]["login"], "body": c["body"],
                     "created_at": c["created_at"], "updated_at": c["updated_at"]}
                    for c in batch]
            if len(batch) < 100:
                return out
        raise AssertionError("unreachable")

    def comment(self, n: int, body: str, token: str = Emulator.BOT_TOKEN) -> int:
        return self.api("POST", f"/issues/{n}/comments", token, json={"body": body})["id"]

    def outsider_comment(self, n: int, body: str) -> int:
        """A comment by mallory, who is not a trusted author."""
        return self.comment(n, body, Emulator.OUTSIDER_TOKEN)

    def edit_comment(self, comment_id: int, body: str,
                     token: str = Emulator.BOT_TOKEN) -> None:
        self.api("PATCH", f"/issues/comments/{comment_id}", token, json={"body": body})

    def delete_comment(self, comment_id: int, token: str = Emulator.BOT_TOKEN) -> None:
        self.api("DELETE", f"/issues/comments/{comment_id}", token)
