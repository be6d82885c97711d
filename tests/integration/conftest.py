"""Fixtures of the integration suite (the harness itself is tests/rig/harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rig import ROOT, Proxy, RepoHandle
from rig.harness import Orion, write_config


@pytest.fixture
def orion(tmp_path: Path, orion_env: dict[str, str], repo: RepoHandle, proxy: Proxy) -> Iterator[Orion]:
    """An :class:`Orion` with the fast configuration (interval 1 s, stale after 4 s), its
    processes run in the checkout."""
    o = Orion(orion_env, write_config(tmp_path), tmp_path, repo=repo, proxy=proxy, cwd=ROOT)
    try:
        yield o
    finally:
        o.cleanup()
