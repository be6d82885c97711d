"""scripts/release-check.py, which the release workflow runs before it tags anything: the
checkout's own version passes once CHANGELOG.md dates its section (pyproject.toml,
orion_action.__version__, the version policy and a dated CHANGELOG section agree), anything
else fails with one line per problem."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orion_action import __version__

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "release-check.py"


def _check(*args: str, script: Path = SCRIPT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=60)


def test_the_current_version_is_released_or_next(tmp_path: Path) -> None:
    """Between releases the version is the next one and CHANGELOG.md collects it under
    [Unreleased]; at release time that section is dated."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{__version__}] - " in changelog or "## [Unreleased]" in changelog


def test_the_current_version_is_releasable_once_dated(tmp_path: Path) -> None:
    """A copy of the checkout whose CHANGELOG dates the current version passes."""
    for name in ("pyproject.toml", "README.md", "action.yml", "scripts/release-check.py",
                 "orion_action", "docs", "examples"):
        source, target = ROOT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, target)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    if f"## [{__version__}] - " not in changelog:
        changelog = re.sub(r"(?m)^## \[Unreleased\]$", f"## [{__version__}] - 2027-01-15", changelog,
                           count=1)
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    notes = tmp_path / "notes.md"
    result = _check(f"v{__version__}", "--notes", str(notes),
                    script=tmp_path / "scripts" / "release-check.py")
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
