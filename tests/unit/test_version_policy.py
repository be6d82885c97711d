"""The version policy (docs/releasing.md): one major version everywhere. pyproject.toml,
orion_action.__version__, every `uses: .../orion-action@vN` (and the schema's
`orion-action/vN/` address) in README.md, docs/ and examples/, `init`'s printed next steps and
the release workflow's moving tag all name the same major; action.yml's name is the project's
(the Marketplace lists the repository's name). scripts/release-check.py holds the rule, so a
release refuses what this test refuses."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import yaml

from orion_action import __version__
from orion_action.config import Config
from orion_action.services.setup import next_steps

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("release_check", ROOT / "scripts" / "release-check.py")
assert _SPEC and _SPEC.loader
release_check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(release_check)
MAJOR = __version__.split(".")[0]


def test_the_package_and_pyproject_agree() -> None:
    assert release_check.pyproject_version((ROOT / "pyproject.toml").read_text()) == __version__


def test_every_reference_names_the_major_version() -> None:
    assert release_check.policy_problems(ROOT) == []


def test_the_walk_sees_the_references() -> None:
    """Guards against a walk that checks nothing: the README, a docs page and every example
    name the action by its major version."""
    seen = {path.relative_to(ROOT).parts[0] for path in release_check.policy_files(ROOT)
            if release_check.MAJOR_REFERENCE.search(path.read_text(encoding="utf-8"))}
    assert {"README.md", "docs", "examples"} <= seen
    for example in (ROOT / "examples").rglob("*.yml"):
        if "orion-action@" in example.read_text(encoding="utf-8"):
            assert f"orion-action@v{MAJOR}" in example.read_text(encoding="utf-8"), example


def test_init_prints_the_major_version() -> None:
    assert f"uses: OWNER/orion-action@v{MAJOR}`" in next_steps(Config())


def test_the_release_workflow_moves_the_major_of_the_checked_version() -> None:
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    build = wf["jobs"]["build"]
    script = "\n".join(s.get("run", "") for s in build["steps"])
    assert "scripts/release-check.py" in script and 'echo "major=${version%%.*}"' in script
    move = "\n".join(s.get("run", "") for s in wf["jobs"]["release"]["steps"])
    assert "needs.build.outputs.major" in str(wf["jobs"]["release"]) and 'tags/v$MAJOR' in move


def test_a_mismatch_is_refused(tmp_path: Path) -> None:
    """One stale `@v0` in a docs page, and an action renamed: two lines, each naming the place."""
    for name in ("pyproject.toml", "README.md", "action.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(f"ok: `OWNER/orion-action@v{MAJOR}`\n"
                                               "stale: `uses: OWNER/orion-action@v0`\n")
    action = tmp_path / "action.yml"
    action.write_text(re.sub(r"(?m)^name: .*$", "name: orion-issue-queue", action.read_text()))
    found = release_check.policy_problems(tmp_path)
    assert len(found) == 2, found
    assert found[0].startswith("docs/page.md:2: orion-action@v0 ")
    assert "action.yml's name 'orion-issue-queue'" in found[1]
