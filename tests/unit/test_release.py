"""scripts/release-check.py, which the release workflow runs before it tags anything: the
checkout's own version passes (pyproject.toml, orion_action.__version__ and a dated CHANGELOG
section agree), anything else fails with one line per problem."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orion_action import __version__

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release-check.py"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=30)


def test_the_current_version_is_releasable(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    result = _check(f"v{__version__}", "--notes", str(notes))
    assert result.returncode == 0, result.stderr
    text = notes.read_text()
    assert text.strip(), "empty notes"
    assert not [line for line in text.splitlines() if line.startswith("## ")], "more than one section"


@pytest.mark.parametrize(("version", "problems"), [
    ("99.0.0", ["pyproject.toml", "__version__", "CHANGELOG.md"]),
    ("1.2", ["X.Y.Z"]),
    ("01.2.3", ["X.Y.Z"]),
])
def test_other_versions_are_refused(version: str, problems: list[str]) -> None:
    result = _check(version)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(problems)
    for line, word in zip(lines, problems, strict=True):
        assert line.startswith("release-check: ") and word in line
