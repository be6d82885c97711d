"""Fixtures of the fault suite: a fast configuration, the product runner."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rig import RepoHandle
from rig.harness import FAST, Orion

from faults import Machines, create_labels


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


@pytest.fixture
def fast_config(tmp_path: Path) -> Path:
    path = tmp_path / "orion.yml"
    path.write_text(FAST)
    return path


@pytest.fixture
def orion(orion_env: dict[str, str], fast_config: Path, workdir: Path,
          repo: RepoHandle) -> Iterator[Orion]:
    create_labels(repo, ["orion-stage-build"])
    runner = Orion(orion_env, fast_config, workdir)
    yield runner
    runner.cleanup()


@pytest.fixture
def machines(workdir: Path) -> Machines:
    assert shutil.which("unshare"), "util-linux unshare is needed to simulate other machines"
    return Machines(workdir)
