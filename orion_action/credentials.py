"""Credentials never sit in an environment block that anything else can read (ADR 0031).

`/proc/PID/environ` shows the block a process started with, for as long as it runs, to any
process of the same user and to root; `PR_SET_DUMPABLE` hides it from the first but not from
root, and self-hosted runners often run as root. So the orion process that finds a credential
in its environment at start-up hands every credential over a pipe to a fresh copy of itself,
exec'd with an environment that holds none (`handover`); the copy reads the pipe
(`take_over`), closes it, keeps the credentials in memory only and marks itself not dumpable
(which keeps a same-user, non-root process out of its memory). The guardian and the command
are started from that clean block, and the command gets the credentials only when
`run.pass_token` says so (`command_env`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
from collections.abc import Mapping

from orion_action.errors import UsageError

HANDOVER_FD = "ORION_CREDENTIALS_FD"  # the pipe's read end in the re-exec'd process
# Names that hold a credential of orion's, of the job or of the runner. The runner's own
# (ACTIONS_*) are given to JavaScript and container actions; a workflow may still export them.
CREDENTIAL_NAMES = frozenset({
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "ORION_RECORD_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL",
})
CREDENTIAL_PREFIXES = ("ORION_APP_", "ACTIONS_ID_TOKEN_REQUEST_")
# What `run.pass_token: true` gives the command on purpose (docs/design.md section 7).
PASSED_TOKENS = ("GITHUB_TOKEN", "GH_TOKEN")
# A pipe holds 64 KiB before a writer blocks; the handover writes before anyone reads.
MAX_HANDOVER_BYTES = 60_000
PR_SET_DUMPABLE = 4


def is_credential(name: str) -> bool:
    """Whether an environment variable holds a credential: the names above, and any other
    GITHUB_*/GH_* name ending in TOKEN (the gh CLI and other tools read several)."""
    upper = name.upper()
    return (
        upper in CREDENTIAL_NAMES
        or upper.startswith(CREDENTIAL_PREFIXES)
        or (upper.startswith(("GITHUB_", "GH_")) and upper.endswith("TOKEN"))
    )


def without_credentials(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not is_credential(k)}


def command_env(env: Mapping[str, str], pass_token: bool) -> dict[str, str]:
    """The command's environment: `env` without any credential, but with GITHUB_TOKEN and
    GH_TOKEN when `run.pass_token` is true."""
    clean = without_credentials(env)
    if pass_token:
        clean.update({k: env[k] for k in PASSED_TOKENS if k in env})
    return clean


def handover(argv: list[str]) -> None:
    """In the process the runner started: when its environment holds a credential, exec
    `argv` (this same orion command line) with the credentials moved to a pipe. Returns only
    when there is nothing to hand over; raises UsageError when the credentials do not fit."""
    secrets = {k: v for k, v in os.environ.items() if is_credential(k)}
    if not secrets:
        return
    payload = json.dumps(secrets).encode()
    if len(payload) > MAX_HANDOVER_BYTES:
        raise UsageError(f"the credentials in the environment are over {MAX_HANDOVER_BYTES} bytes")
    read_end, write_end = os.pipe()
    os.write(write_end, payload)  # fits the pipe's buffer: never blocks, never partial
    os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {**without_credentials(os.environ), HANDOVER_FD: str(read_end)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *argv], env)


def take_over() -> dict[str, str]:
    """In the re-exec'd process: the credentials handed over (read to EOF, the pipe closed,
    the fd's name dropped from os.environ), or {} when there was no handover. The process
    is marked not dumpable once it holds them."""
    fd_text = os.environ.pop(HANDOVER_FD, None)
    if fd_text is None:
        return {}
    if not fd_text.isdigit():
        raise UsageError(f"{HANDOVER_FD} must be a file descriptor number, got {fd_text!r}")
    fd = int(fd_text)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        secrets = json.loads(b"".join(chunks))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the credentials handed over on fd {fd}: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    if not isinstance(secrets, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and is_credential(k) for k, v in secrets.items()
    ):
        raise UsageError(f"the credentials handed over on fd {fd} are not a mapping of credential names")
    _not_dumpable()
    return secrets


def _not_dumpable() -> None:
    """Keep a same-user, non-root process (a command without run.user) out of our memory:
    /proc/PID/mem, ptrace and a core dump need a dumpable process. Root is not kept out."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


_taken: dict[str, str] | None = None  # what startup_env took over, once per process


def startup_env(argv: list[str]) -> dict[str, str]:
    """The environment orion works with: os.environ plus the credentials, which are in no
    environment block of ours (handover first re-execs when they still are). Idempotent:
    every entry (`orion_action.__main__.entry`: `python -m`, the script, the action's step)
    calls it before the heavy imports, so the image that is replaced has imported little;
    cli.main calls it again."""
    global _taken
    if _taken is None:
        if HANDOVER_FD in os.environ:
            _taken = take_over()
        else:
            handover(argv)
            _taken = {}
    return {**os.environ, **_taken}
