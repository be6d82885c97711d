"""Shared fixtures: one emulator per session, a fresh proxy and repository per test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:  # `import rig` under any --import-mode
    sys.path.insert(0, _TESTS)

from rig import Emulator, Proxy, RepoHandle, free_port  # noqa: E402
from rig import orion_env as _orion_env  # noqa: E402


@pytest.fixture
def dead_url() -> str:
    """An API URL nobody listens on: every connection is refused at once."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """The `emulate` GitHub emulator, started once per session (per xdist worker)."""
    with Emulator() as emu:
        yield emu


@pytest.fixture
def proxy(emulator: Emulator) -> Iterator[Proxy]:
    """A fault-injecting proxy in front of the session's emulator, with its own rate-limit
    counter; stopped (parked requests dropped, every thread joined) and cleared after."""
    with Proxy(emulator.url, tokens=emulator.tokens, upstream_tokens=emulator.lease_tokens(),
               helper_tokens=emulator.lease_tokens()) as p:
        yield p


@pytest.fixture
def repo(emulator: Emulator, proxy: Proxy, request: pytest.FixtureRequest) -> Iterator[RepoHandle]:
    """A fresh repository; PyGithub objects go through ``proxy``, helpers go direct."""
    handle = RepoHandle.create(emulator, proxy.url, hint=request.node.name)
    yield handle
    handle.dispose()


@pytest.fixture
def orion_env(repo: RepoHandle, proxy: Proxy) -> dict[str, str]:
    """Environment for running orion-action as a subprocess through the proxy as the bot."""
    return _orion_env(repo.full_name, proxy.url, Emulator.BOT_TOKEN)
