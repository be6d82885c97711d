"""The CLI outside Actions: a wheel built from this checkout, installed into a fresh virtual
environment (what `pipx install .` or `pipx install orion_action-*.whl` does), answers
`orion-action --version` with the package's version, from the installed copy, not the
checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from rig import ROOT

from orion_action import __version__


def _run(*argv: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"{argv}: {result.stdout}{result.stderr}"
    return result


# Slow: it builds a wheel and installs the locked dependencies from the package index (more
# than `make deps` does, and half a minute or more).
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_built_wheel_installs_and_reports_its_version(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", dist, ROOT,
         cwd=tmp_path)
    (wheel,) = dist.glob("orion_action-*.whl")
    assert wheel.name.startswith(f"orion_action-{__version__}-py3-none-any")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        assert "orion-action = orion_action.__main__:entry" in zf.read(entry_points).decode()
    assert {n.split("/")[0] for n in names} == {"orion_action", f"orion_action-{__version__}.dist-info"}
    assert "orion_action/schema/orion.schema.json" in names  # the configuration schema ships

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    # The runtime dependencies as the action installs them, then the wheel itself.
    _run(python, "-m", "pip", "install", "--quiet", "--only-binary=:all:", "--require-hashes",
         "-r", ROOT / "requirements.lock", cwd=tmp_path)
    _run(python, "-m", "pip", "install", "--quiet", "--no-deps", wheel, cwd=tmp_path)
    _run(python, "-m", "pip", "check", cwd=tmp_path)

    version = _run(venv / "bin" / "orion-action", "--version", cwd=tmp_path)
    assert version.stdout.strip() == f"orion-action {__version__}"
    where = _run(python, "-c", "import orion_action; print(orion_action.__file__)", cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    usage = subprocess.run([venv / "bin" / "orion-action", "run", "--next"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert usage.returncode == 64 and "no command to run" in usage.stderr
