#!/usr/bin/env python3
"""Check that a version may be released, and print its release notes.

    python3 scripts/release-check.py 1.2.0 [--notes FILE]

The version (X.Y.Z, a leading "v" is allowed) must equal pyproject.toml's `version` and
orion_action.__version__, and CHANGELOG.md must have a dated section for it
(`## [1.2.0] - 2027-01-15`) with something in it. The version policy holds too (docs/releasing.md):
every `orion-action@vN` (and the schema's `orion-action/vN/` address) in README.md, docs/,
examples/ and the package (init's output) names pyproject's major version, and action.yml's
`name` is the project's name (the Marketplace listing is the repository's). The release
workflow runs this before it tags anything; a maintainer can run it before pushing a tag.
Exit 0 and the section's text (to FILE with --notes), or exit 1 with one line per problem.
Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def pyproject_version(text: str) -> str | None:
    """`version = "..."` of the [project] table (tomllib is 3.11+; this runs on 3.10 too)."""
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = table and re.search(r'^version\s*=\s*"([^"]+)"\s*$', table.group(1), re.M)
    return found.group(1) if found else None


def package_version(text: str) -> str | None:
    for node in ast.parse(text).body:
        if (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__version__" for t in node.targets)
                and isinstance(node.value, ast.Constant)):
            return str(node.value.value)
    return None


def changelog_section(text: str, version: str) -> str | None:
    """The body of `## [version] - YYYY-MM-DD`, up to the next `## ` heading."""
    head = re.compile(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}\s*$", re.M)
    found = head.search(text)
    if not found:
        return None
    rest = text[found.end():]
    end = re.search(r"^## ", rest, re.M)
    return (rest[: end.start()] if end else rest).strip()


# `uses: OWNER/orion-action@v1` and the schema address `.../orion-action/v1/...`.
MAJOR_REFERENCE = re.compile(r"orion-action(?:@|/)v(\d+)\b")


def policy_files(root: Path) -> list[Path]:
    """Where an adopter copies a version from: the docs, the examples and the package's own text."""
    found = [root / "README.md", root / "action.yml"]
    for folder, patterns in (("docs", ("*.md",)), ("examples", ("*.yml", "*.yaml", "*.md")),
                             ("orion_action", ("*.py",))):
        for pattern in patterns:
            found += (root / folder).rglob(pattern)
    return sorted(p for p in found if p.is_file())


def policy_problems(root: Path = ROOT) -> list[str]:
    """Every major-version reference agrees with pyproject.toml's version; action.yml's name is
    the project's name."""
    pyproject = (root / "pyproject.toml").read_text()
    version = pyproject_version(pyproject) or ""
    major = version.split(".")[0]
    found = []
    for path in policy_files(root):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in MAJOR_REFERENCE.finditer(line):
                if match.group(1) != major:
                    found.append(f"{path.relative_to(root)}:{number}: {match.group(0)} is not the "
                                 f"major version of {version!r} (v{major})")
    project = re.search(r'^name\s*=\s*"([^"]+)"\s*$', pyproject, re.M)
    action = re.search(r"^name:\s*(\S+)\s*$", (root / "action.yml").read_text(), re.M)
    if not project or not action or action.group(1) != project.group(1):
        found.append(f"action.yml's name {action and action.group(1)!r} is not the project's name "
                     f"{project and project.group(1)!r} (the Marketplace lists the repository's)")
    return found


def problems(version: str, root: Path = ROOT) -> tuple[list[str], str]:
    found: list[str] = []
    if not SEMVER.match(version):
        return [f"version must be X.Y.Z (semantic versioning), got {version!r}"], ""
    in_pyproject = pyproject_version((root / "pyproject.toml").read_text())
    if in_pyproject != version:
        found.append(f"pyproject.toml has version {in_pyproject!r}, not {version!r}")
    in_package = package_version((root / "orion_action" / "__init__.py").read_text())
    if in_package != version:
        found.append(f"orion_action/__init__.py has __version__ {in_package!r}, not {version!r}")
    found += policy_problems(root)
    notes = changelog_section((root / "CHANGELOG.md").read_text(), version)
    if notes is None:
        found.append(f"CHANGELOG.md has no section '## [{version}] - YYYY-MM-DD'")
    elif not notes:
        found.append(f"CHANGELOG.md's section for {version} is empty")
    return found, notes or ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="X.Y.Z or vX.Y.Z")
    parser.add_argument("--notes", metavar="FILE", help="write the CHANGELOG section here")
    args = parser.parse_args(argv)
    version = args.version[1:] if args.version.startswith("v") else args.version
    found, notes = problems(version)
    if found:
        for line in found:
            print(f"release-check: {line}", file=sys.stderr)
        return 1
    if args.notes:
        Path(args.notes).write_text(notes + "\n")
    else:
        print(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
