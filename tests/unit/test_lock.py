"""requirements.lock, what the action installs, against requirements.txt, what the package
declares: every runtime dependency pinned exactly, hashed, and inside its declared range, so
a lock refreshed by hand or by scripts/lock-deps.sh cannot drift from the ranges."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _lock() -> dict[str, tuple[str, list[str]]]:
    """name -> (pinned version, hashes), from pip-compile's format (continued lines)."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "requirements.lock").read_text())
    pins: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *options = line.split(" --hash=")
        name, _, version = spec.strip().partition("==")
        assert version, f"not pinned with ==: {line}"
        pins[canonicalize_name(name)] = (version, [o.strip() for o in options])
    return pins


def _ranges() -> dict[str, Requirement]:
    reqs = [Requirement(line) for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    return {canonicalize_name(r.name): r for r in reqs}


def test_every_declared_dependency_is_pinned_inside_its_range() -> None:
    pins = _lock()
    for name, req in _ranges().items():
        assert name in pins, f"{name} is in requirements.txt but not in requirements.lock"
        version = pins[name][0]
        assert req.specifier.contains(version, prereleases=False), f"{name}=={version} is outside {req}"


def test_every_pin_has_hashes() -> None:
    for name, (_, hashes) in _lock().items():
        assert hashes, f"{name} has no hash"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), name


def test_requirements_txt_and_pyproject_declare_the_same_ranges() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.M | re.S)
    assert block
    declared = {canonicalize_name(Requirement(d).name): str(Requirement(d).specifier)
                for d in re.findall(r'"([^"]+)"', block.group(1))}
    assert declared == {name: str(r.specifier) for name, r in _ranges().items()}
