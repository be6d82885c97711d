"""The docs document the whole interface (in the spirit of sqlite-utils' tests/test_docs.py):
every command and option of the CLI and every exit code (docs/commands.md), every
configuration key (docs/configuration.md). The README is a short front door that links every
page; its Examples table agrees with the example workflows (each header's first sentence,
runners, triggers, permissions per job); every relative link and anchor in the README and
docs/ resolves; and every "docs/design.md section N" cited in the repository exists.

A failure names what is missing; document it in the page it names (or fix the link).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from orion_action.cli import build_parser
from orion_action.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
COMMANDS_PAGE = (DOCS / "commands.md").read_text(encoding="utf-8")
CONFIGURATION_PAGE = (DOCS / "configuration.md").read_text(encoding="utf-8")
PAGES = ["configuration.md", "commands.md", "operations.md", "security.md", "troubleshooting.md",
         "releasing.md", "development.md"]
SCHEMA = json.loads((ROOT / "orion_action/schema/orion.schema.json").read_text(encoding="utf-8"))
SOURCE = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "orion_action").rglob("*.py")))


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
COMMANDS_SECTION = COMMANDS_PAGE


def test_the_parser_has_the_known_commands() -> None:
    """The walk below sees the real parser (guards against walking nothing)."""
    assert {"run", "reconcile", "status", "release", "init"} <= set(COMMANDS)
    assert {"--config", "--repo"} <= COMMON


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_is_documented(command: str) -> None:
    assert re.search(rf"orion-action {command}\b", COMMANDS_SECTION), (
        f"command `orion-action {command}` is not documented in docs/commands.md"
    )


@pytest.mark.parametrize("command,option", sorted(
    (c, o) for c, p in COMMANDS.items() for o in _options(p)
))
def test_every_option_is_documented(command: str, option: str) -> None:
    if option in COMMON:
        assert f"`{option}" in COMMANDS_SECTION, (
            f"option {option} (every command has it) is not documented in docs/commands.md"
        )
        return
    lines = [line for line in COMMANDS_PAGE.splitlines() if re.search(rf"orion-action {command}\b", line)]
    assert any(re.search(rf"{re.escape(option)}\b", line) for line in lines), (
        f"option `orion-action {command} {option}` is not documented in docs/commands.md "
        f"(no line that names `orion-action {command}` mentions {option})"
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_a_description_and_an_epilog(command: str) -> None:
    """`orion-action COMMAND --help` says what it does, what it reads from the environment and
    what every exit code means (the documented codes of docs/commands.md, from ExitCode)."""
    parser = COMMANDS[command]
    assert parser.description and len(parser.description) > 40, command
    epilog = parser.epilog or ""
    for variable in ("GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_API_URL", "ORION_APP_ID"):
        assert variable in epilog, f"{command}: the help's epilog does not name {variable}"
    codes = set(re.findall(r"(?m)^  (\d+) ", epilog))
    assert {str(int(code)) for code in ExitCode} <= codes, f"{command}: {codes}"
    assert {"124", "127"} <= codes
    assert "--quiet" in _options(parser)


def test_quiet_silences_the_log_lines_and_only_for_its_own_invocation(
        capsys: pytest.CaptureFixture[str]) -> None:
    from orion_action import cli

    cli.build_parser().parse_args(["status", "--quiet"])
    cli._log("this command used 4 API requests")
    assert capsys.readouterr().err == ""
    cli.build_parser().parse_args(["status"])
    cli._log("this command used 4 API requests")
    assert capsys.readouterr().err == "orion-action: this command used 4 API requests\n"


@pytest.mark.parametrize(("argv", "see"), [([], "see orion-action --help"),
                                           (["run"], "see orion-action run --help")])
def test_a_usage_error_points_at_the_right_help(argv: list[str], see: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == int(ExitCode.USAGE)
    assert f"({see})" in capsys.readouterr().err


def test_every_action_input_and_output_is_documented() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    table = re.search(r"(?ms)^\| input \| default \| meaning \|.*?(?=^[^|])", COMMANDS_PAGE)
    assert table, "docs/commands.md has no action input table"
    missing = [name for name in action["inputs"] if f"`{name}`" not in table.group(0)]
    assert not missing, f"action inputs missing from docs/commands.md's input table: {missing}"
    outputs = re.search(r"(?m)^Outputs: .*(?:\n.+)*", COMMANDS_PAGE)
    assert outputs, "docs/commands.md does not list the action's outputs"
    missing = [name for name in action["outputs"] if f"`{name}`" not in outputs.group(0)]
    assert not missing, f"action outputs missing from docs/commands.md: {missing}"


def test_the_top_level_options_are_documented() -> None:
    top = _options(build_parser())
    assert top, "the top-level parser has no options: is the walk broken?"
    for option in sorted(top):
        assert f"orion-action {option}" in COMMANDS_PAGE, f"`orion-action {option}` is not in commands.md"


def _documented_exit_codes() -> set[str]:
    """The first cell of every row of docs/commands.md's exit-code tables."""
    codes: set[str] = set()
    for table in re.findall(r"(?ms)^\| exit code \|.*?(?=^[^|]|\Z)", COMMANDS_PAGE):
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
        f"exit code {code} ({name}) is not in docs/commands.md's exit-code table"
    )


def _config_keys(node: dict[str, Any] = SCHEMA, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, sub in node.get("properties", {}).items():
        keys += _config_keys(sub, f"{prefix}{key}.") if "properties" in sub else [f"{prefix}{key}"]
    return keys


@pytest.mark.parametrize("key", _config_keys())
def test_every_configuration_key_is_documented(key: str) -> None:
    assert f"`{key}`" in CONFIGURATION_PAGE, (
        f"configuration key `{key}` is not documented in docs/configuration.md"
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


def test_the_readme_is_a_short_front_door_that_links_every_page() -> None:
    """What, why, the two commands, adopt in five minutes, the examples, links: the reference
    lives in docs/ (a person reads the README in five minutes, not thirty)."""
    assert len(README.splitlines()) <= 150, "README.md grew: move the reference into a docs/ page"
    for heading in ("## Try it (two commands)", "## Adopt it in five minutes", "## Examples",
                    "## Documentation", "## Security"):
        assert f"\n{heading}\n" in README, heading
    assert "make demo" in README and "make test" in README and "pipx install orion-action" in README
    for page in PAGES:
        assert f"](docs/{page})" in README, f"README.md does not link docs/{page}"


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"(?ms)^```.*?^```", "", markdown)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"(?m)^#+ (.+)$", text)}


MARKDOWN = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), ROOT / "examples" / "arc" / "README.md"]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"(?ms)^```.*?^```", "", text)):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        markdown = where.suffix == ".md" and where.exists()
        if not where.exists() or (anchor and markdown and anchor not in _anchors(where.read_text("utf-8"))):
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)}: links that go nowhere: {broken}"


def _readme_examples() -> dict[str, list[str]]:
    """README's Examples table: file name -> its cells (what, runner, starts on, permissions)."""
    rows = {}
    for line in README.splitlines():
        found = re.match(r"\| \[`([\w.-]+\.yml)`\]\(examples/[\w.-]+\) \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = [cell.strip() for cell in found.group(2).split(" | ")]
    return rows


EXAMPLES = sorted((ROOT / "examples").glob("*.yml"))


def _workflow(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as a boolean
    return dict(data)


def _header(path: Path) -> str:
    """The file's opening comment, as one line."""
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line.lstrip("# ").strip())
    return " ".join(header)


def _first_sentence(path: Path) -> str:
    text = _header(path)
    return text[: text.index(". ") + 1] if ". " in text else text


def _yaml_list(value: Any) -> str:
    return f"`[{', '.join(value)}]`" if isinstance(value, list) else f"`{value}`"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_matches_its_readme_row(path: Path) -> None:
    """The README row says what the file's header says, and the runners, triggers and
    per-job permissions the file has."""
    rows = _readme_examples()
    assert path.name in rows, f"README.md's Examples table has no row for {path.name}"
    what, runner, starts_on, permissions = rows[path.name]
    assert what == _first_sentence(path), f"{path.name}: the header's first sentence and the README differ"
    wf = _workflow(path)
    jobs = wf["jobs"]
    # Jobs on the same runner share one entry: `reconcile`, `keepalive`: `ubuntu-latest`.
    by_runner: dict[str, list[str]] = {}
    for name, job in jobs.items():
        by_runner.setdefault(_yaml_list(job["runs-on"]), []).append(f"`{name}`")
    assert runner == "; ".join(f"{', '.join(names)}: {where}" for where, names in by_runner.items())
    expected = "; ".join(
        f"`{name}`: " + ", ".join(f"`{scope}: {level}`" for scope, level in job["permissions"].items())
        for name, job in jobs.items())
    assert permissions == expected, f"{path.name}: the README says {permissions}, the file {expected}"
    events = {"dispatch": "workflow_dispatch", "schedule": "schedule"}
    triggers = [t for t in ("dispatch", "schedule") if events[t] in wf["on"]]
    labels = sorted({label for job in jobs.values()
                     for label in re.findall(r"label\.name == '([^']+)'", str(job.get("if", "")))})
    assert sorted(re.findall(r"`([^`]+)`", starts_on)) == labels, f"{path.name}: {starts_on}"
    assert [t for t in ("dispatch", "schedule") if t in starts_on] == triggers, f"{path.name}: {starts_on}"
    # The header says the same: the labels that start it and the runner labels it needs.
    header = _header(path)
    for label in labels:
        assert f"`{label}`" in header or (label == "orion" and "the queue label" in header), label
    custom = {label for job in jobs.values() if isinstance(job["runs-on"], list)
              for label in job["runs-on"] if label not in ("self-hosted", "linux")}
    for label in custom:
        assert f"--labels {label}`" in header or f"`{label}`" in header, (path.name, label)


def _security_permission_rows() -> list[tuple[list[Path], str, str]]:
    """docs/security.md's "Permissions of the examples": (files, job, permissions cell); a blank
    first cell means the files of the row above."""
    text = (DOCS / "security.md").read_text(encoding="utf-8")
    table = text.split("## Permissions of the examples", 1)[1].split("\n\n")[2]
    rows: list[tuple[list[Path], str, str]] = []
    files: list[Path] = []
    for line in table.splitlines()[2:]:
        first, job, _, permissions = (cell.strip() for cell in line.strip("|").split(" | "))
        if first:
            files = [p for pattern in re.findall(r"`([^`]+)`", first)
                     for p in sorted((ROOT / "examples").glob(pattern))]
        rows.append((files, job.strip("`"), permissions))
    return rows


def test_the_security_pages_permission_table_agrees_with_the_examples() -> None:
    """The second permission table (docs/security.md) says what each job of each example file
    asks for, as the README's Examples table does (test_every_example_matches_its_readme_row)."""
    rows = _security_permission_rows()
    covered = set()
    for files, job, cell in rows:
        assert files, f"a row names no example file: {job}"
        said = re.findall(r"`([\w-]+: \w+)`", cell.split(" (")[0])
        for path in files:
            asked = _workflow(path)["jobs"][job]["permissions"]
            granted = [f"{scope}: {level}" for scope, level in asked.items()]
            assert said == granted, f"docs/security.md: {said} for {path.name} `{job}`, the file: {granted}"
            covered.add((path.name, job))
    every = {(p.name, job) for p in EXAMPLES for job in _workflow(p)["jobs"]}
    assert covered == every, f"jobs missing from docs/security.md: {sorted(every - covered)}"


def test_the_adr_index_lists_every_record_once() -> None:
    """docs/adr/README.md, the index by subject, links each decision record exactly once, and
    nothing else under that name: a new record goes under its subject."""
    adr = DOCS / "adr"
    index = (adr / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\((\d{4}-[^)]+\.md)\)", index)
    assert sorted(linked) == sorted(p.name for p in adr.glob("[0-9][0-9][0-9][0-9]-*.md"))
