"""The README documents the whole interface (in the spirit of sqlite-utils' tests/test_docs.py):
every command and option of the CLI, every exit code, every configuration key. And every
"docs/design.md section N" cited in the repository exists.

A failure names what is missing; document it in README.md (or fix the citation).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from orion_action.cli import build_parser
from orion_action.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCHEMA = json.loads((ROOT / "orion_action/schema/orion.schema.json").read_text(encoding="utf-8"))
SOURCE = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "orion_action").rglob("*.py")))


def _section(markdown: str, heading: str) -> str:
    """The text under a `## heading`, up to the next heading of the same level."""
    match = re.search(rf"(?ms)^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown)
    assert match, f"README.md has no '## {heading}' section"
    return match.group(1)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return dict(actions[0].choices)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """The long options of a parser, without --help."""
    return {s for a in parser._actions for s in a.option_strings
            if s.startswith("--") and not isinstance(a, argparse._HelpAction)}


COMMANDS = _subcommands()
COMMON = set.intersection(*(_options(p) for p in COMMANDS.values()))
COMMANDS_SECTION = _section(README, "Commands")


def test_the_parser_has_the_known_commands() -> None:
    """The walk below sees the real parser (guards against walking nothing)."""
    assert {"run", "reconcile", "status", "release", "init"} <= set(COMMANDS)
    assert {"--config", "--repo"} <= COMMON


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_is_documented(command: str) -> None:
    assert re.search(rf"orion-action {command}\b", COMMANDS_SECTION), (
        f"command `orion-action {command}` is not documented in README.md's Commands section"
    )


@pytest.mark.parametrize("command,option", sorted(
    (c, o) for c, p in COMMANDS.items() for o in _options(p)
))
def test_every_option_is_documented(command: str, option: str) -> None:
    if option in COMMON:
        assert f"`{option}" in COMMANDS_SECTION, (
            f"option {option} (every command has it) is not documented in README.md's Commands section"
        )
        return
    lines = [line for line in README.splitlines() if re.search(rf"orion-action {command}\b", line)]
    assert any(re.search(rf"{re.escape(option)}\b", line) for line in lines), (
        f"option `orion-action {command} {option}` is not documented in README.md "
        f"(no line that names `orion-action {command}` mentions {option})"
    )


def test_the_top_level_options_are_documented() -> None:
    top = _options(build_parser())
    assert top, "the top-level parser has no options: is the walk broken?"
    for option in sorted(top):
        assert f"orion-action {option}" in README, f"`orion-action {option}` is not documented in README.md"


def _documented_exit_codes() -> set[str]:
    """The first cell of every row of README's exit-code tables."""
    codes: set[str] = set()
    for table in re.findall(r"(?ms)^\| exit code \|.*?(?=^[^|]|\Z)", README):
        codes |= set(re.findall(r"(?m)^\| ([^|]+?) \|", table))
    return codes


# Exit codes that are not ExitCode members but that commands return, by the shell's convention.
SHELL_CODES = {127: "the command was not found or could not be run",
               124: "timed out (coreutils' timeout)"}


def _returned(code: int) -> bool:
    """Whether the product can return `code`: the number is used in the code, or a name bound to
    it (`IDLE_EXIT_CODE = 124`) is used somewhere other than where it is bound."""
    for line in SOURCE.splitlines():
        line = line.split("#", 1)[0]
        if not re.search(rf"\b{code}\b", line):
            continue
        bound = re.match(rf"\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*{code}\s*$", line)
        if not bound or len(re.findall(rf"\b{bound.group(1)}\b", SOURCE)) > 1:
            return True
    return False


CODES = sorted({int(c) for c in ExitCode} | {c for c in SHELL_CODES if _returned(c)})


def test_the_exit_code_walk_sees_the_shell_codes() -> None:
    """127 is returned by `run` for a command that cannot be started: the walk must see it."""
    assert 127 in CODES


@pytest.mark.parametrize("code", CODES)
def test_every_exit_code_is_documented(code: int) -> None:
    name = ExitCode(code).name if code in ExitCode._value2member_map_ else SHELL_CODES[code]
    assert str(code) in _documented_exit_codes(), (
        f"exit code {code} ({name}) is not in README.md's exit-code table"
    )


def _config_keys(node: dict[str, Any] = SCHEMA, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, sub in node.get("properties", {}).items():
        keys += _config_keys(sub, f"{prefix}{key}.") if "properties" in sub else [f"{prefix}{key}"]
    return keys


@pytest.mark.parametrize("key", _config_keys())
def test_every_configuration_key_is_documented(key: str) -> None:
    assert f"`{key}`" in _section(README, "Configuration"), (
        f"configuration key `{key}` is not documented in README.md's Configuration section"
    )


def _repo_files() -> list[Path]:
    """The repository's text files (what a fresh clone has, without what `make deps` adds)."""
    skip = {".git", ".venv", "node_modules", ".hypothesis", ".pytest_cache", "__pycache__"}
    out = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        out += [Path(top, f) for f in sorted(files)
                if Path(f).suffix in {".py", ".md", ".sh", ".yml", ".yaml", ".toml", ""}]
    return out


def _citations() -> list[tuple[str, int]]:
    found = []
    for path in _repo_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in re.finditer(r"docs/design\.md (sections?) ([\d, and]+)", text):
            for number in re.findall(r"\d+", match.group(2)):
                found.append((f"{path.relative_to(ROOT)}", int(number)))
    return found


def test_every_design_citation_names_an_existing_section() -> None:
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    sections = {int(n) for n in re.findall(r"(?m)^## (\d+)\. ", design)}
    citations = _citations()
    assert len(citations) >= 20, "the citation walk finds too little: is it broken?"
    dangling = [f"{where}: section {n}" for where, n in citations if n not in sections]
    assert not dangling, f"citations of docs/design.md sections that do not exist: {dangling}"


def test_nothing_cites_the_old_design_file() -> None:
    stale = [str(p.relative_to(ROOT)) for p in _repo_files()
             if re.search(r"\bDESIGN(\.md)? section", p.read_text(encoding="utf-8", errors="replace"))]
    assert not stale, f"these files cite DESIGN.md, which is not in the repository: {stale}"
