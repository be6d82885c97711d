"""The published JSON Schema of `.github/orion.yml` and the loader (orion_action/config.py)
agree: the same key paths, the same defaults, every example configuration in the repository
passes both, and bad configurations fail both.

When this fails after adding a configuration key, add the key to the other side: the schema
(`orion_action/schema/orion.schema.json`, with a description, a default and an example) or the
loader (`config._SCHEMA` and `Config`). docs/design.md section 8.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from rig import harness

from orion_action import config as loader
from orion_action.config import Config, parse_config, parse_duration
from orion_action.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = "orion_action/schema/orion.schema.json"
SCHEMA: dict[str, Any] = json.loads((ROOT / SCHEMA_FILE).read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


# -- the two sides, walked ------------------------------------------------------------------------

def schema_leaves(node: dict[str, Any] = SCHEMA, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every key path the schema describes (`heartbeat.interval`), with its subschema."""
    out: dict[str, dict[str, Any]] = {}
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        if "properties" in sub:
            out.update(schema_leaves(sub, f"{path}."))
        else:
            out[path] = sub
    return out


def loader_paths(spec: dict[str, Any] | None = None, prefix: str = "") -> set[str]:
    """Every key path the loader knows, walked from its table of keys (`config._SCHEMA`)."""
    if spec is None:
        spec = getattr(loader, "_SCHEMA", None)
        assert isinstance(spec, dict), (
            "orion_action/config.py no longer has its key table `_SCHEMA` (section -> key -> kind): "
            "update loader_paths() in tests/unit/test_schema.py to walk what replaced it"
        )
    out: set[str] = set()
    for key, kind in spec.items():
        if isinstance(kind, dict):
            out |= loader_paths(kind, f"{prefix}{key}.")
        else:
            out.add(f"{prefix}{key}")
    return out


def nested(path: str, value: Any) -> dict[str, Any]:
    """{"heartbeat": {"interval": value}} from "heartbeat.interval"."""
    doc: Any = value
    for part in reversed(path.split(".")):
        doc = {part: doc}
    return dict(doc)


def schema_errors(doc: Any) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}"
            for e in VALIDATOR.iter_errors(doc)]


def loader_error(doc: Any) -> str | None:
    try:
        parse_config(doc, "test.yml")
    except ConfigError as exc:
        return str(exc)
    return None


LEAVES = schema_leaves()


def test_the_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_ships_in_the_package() -> None:
    shipped = resources.files("orion_action").joinpath("schema/orion.schema.json")
    assert json.loads(shipped.read_text(encoding="utf-8")) == SCHEMA
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'(?m)^orion_action = \[.*"schema/\*\.json".*\]', pyproject), (
        "pyproject.toml must list schema/*.json in [tool.setuptools.package-data] orion_action"
    )


def test_every_key_the_loader_accepts_is_in_the_schema() -> None:
    missing = sorted(loader_paths() - set(LEAVES))
    assert not missing, (
        f"configuration key(s) {', '.join(missing)} are accepted by orion_action/config.py "
        f"but missing from {SCHEMA_FILE}: add them there, with a description, default and example"
    )


def test_every_key_in_the_schema_is_accepted_by_the_loader() -> None:
    extra = sorted(set(LEAVES) - loader_paths())
    assert not extra, (
        f"configuration key(s) {', '.join(extra)} are in {SCHEMA_FILE} "
        f"but orion_action/config.py does not accept them: add them to the loader or drop them"
    )


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_each_key_is_documented_with_default_and_example(path: str) -> None:
    sub = LEAVES[path]
    assert sub.get("description"), f"{SCHEMA_FILE}: {path} has no description"
    assert "default" in sub, f"{SCHEMA_FILE}: {path} has no default"
    assert sub.get("examples"), f"{SCHEMA_FILE}: {path} has no example"


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_the_schema_default_is_the_loader_default(path: str) -> None:
    """Writing a key with its documented default changes nothing."""
    doc = nested(path, LEAVES[path]["default"])
    assert not schema_errors(doc), schema_errors(doc)
    assert parse_config(doc, "test.yml") == parse_config({}, "test.yml"), (
        f"{path}: the schema's default {LEAVES[path]['default']!r} is not the loader's default"
    )


@pytest.mark.parametrize("path", sorted(LEAVES))
def test_the_schema_example_is_valid_and_takes_effect(path: str) -> None:
    for example in LEAVES[path]["examples"]:
        doc = nested(path, example)
        assert not schema_errors(doc), (path, schema_errors(doc))
        assert loader_error(doc) is None, loader_error(doc)
        assert parse_config(doc, "test.yml") != parse_config({}, "test.yml"), (
            f"{path}: setting it to {example!r} changed nothing in the loaded configuration"
        )


@pytest.mark.parametrize("path", sorted(p for p, sub in LEAVES.items() if "enum" in sub))
def test_every_allowed_value_loads(path: str) -> None:
    for value in LEAVES[path]["enum"]:
        assert loader_error(nested(path, value)) is None, loader_error(nested(path, value))


# -- every example configuration in the repository -------------------------------------------

def _module(path: Path) -> ModuleType:
    """Import a helper module from its file (tests/ is on sys.path, see tests/conftest.py)."""
    name = f"_schema_example_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _yaml_block_after(markdown: Path, heading: str) -> str:
    """The first ```yaml block after `heading` in a Markdown file."""
    text = markdown.read_text(encoding="utf-8")
    start = text.index(heading)
    match = re.compile(r"```yaml\n(.*?)```", re.DOTALL).search(text, start)
    assert match, f"{markdown.name}: no yaml block after {heading!r}"
    return match.group(1)


def example_configs() -> Iterator[tuple[str, str]]:
    skip = {".git", ".venv", "node_modules"}
    for path in sorted(ROOT.rglob("*.yml")) + sorted(ROOT.rglob("*.yaml")):
        if path.name in ("orion.yml", "orion.yaml") and not skip & set(path.relative_to(ROOT).parts):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    yield "docs/configuration.md", _yaml_block_after(ROOT / "docs/configuration.md",
                                                     "## The configuration file")
    yield "docs/design.md, section 8", _yaml_block_after(ROOT / "docs/design.md", "## 8. Configuration")
    yield "demo/demo.py CONFIG", _module(ROOT / "demo" / "demo.py").CONFIG
    yield "tests/rig/harness.py FAST", harness.FAST  # the integration and fault suites' config


EXAMPLES = dict(example_configs())


def test_the_examples_include_the_repositorys_own_file() -> None:
    assert ".github/orion.yml" in EXAMPLES


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_config_passes_the_schema_and_loads(name: str) -> None:
    doc = yaml.safe_load(EXAMPLES[name])
    assert not schema_errors(doc), f"{name}: {schema_errors(doc)}"
    assert loader_error(doc) is None, f"{name}: {loader_error(doc)}"


def test_the_helper_config_of_the_reconcile_tests(tmp_path: Path) -> None:
    doc = yaml.safe_load(harness.write_config(tmp_path).read_text(encoding="utf-8"))
    assert not schema_errors(doc) and loader_error(doc) is None


# -- bad configurations -----------------------------------------------------------------------

BAD = [
    # (why, document, the key the loader's message names, the key path the schema reports)
    ("top level a list", [1, 2], "top level", ""),
    ("top level a string", "labels", "top level", ""),
    ("unknown section", {"heartbeats": {}}, "heartbeats", ""),
    ("unknown key", {"heartbeat": {"intervall": 5}}, "heartbeat.intervall", "heartbeat"),
    ("section not a mapping", {"heartbeat": 5}, "heartbeat", "heartbeat"),
    ("section empty (null)", {"labels": None}, "labels", "labels"),
    ("interval a word", {"heartbeat": {"interval": "often"}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval zero", {"heartbeat": {"interval": 0}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval zero seconds", {"heartbeat": {"interval": "0s"}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval negative", {"heartbeat": {"interval": -1}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval in days", {"heartbeat": {"interval": "5d"}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval a boolean", {"heartbeat": {"interval": True}}, "heartbeat.interval", "heartbeat.interval"),
    ("interval a list", {"heartbeat": {"interval": [5]}}, "heartbeat.interval", "heartbeat.interval"),
    ("stale_after in words", {"heartbeat": {"stale_after": "5 minutes"}}, "heartbeat.stale_after",
     "heartbeat.stale_after"),
    ("max_attempts a string", {"retry": {"max_attempts": "3"}}, "retry.max_attempts", "retry.max_attempts"),
    ("max_attempts zero", {"retry": {"max_attempts": 0}}, "retry.max_attempts", "retry.max_attempts"),
    ("max_attempts a fraction", {"retry": {"max_attempts": 2.5}}, "retry.max_attempts", "retry.max_attempts"),
    ("max_attempts a boolean", {"retry": {"max_attempts": True}}, "retry.max_attempts", "retry.max_attempts"),
    ("kill_grace negative", {"run": {"kill_grace": "-1s"}}, "run.kill_grace", "run.kill_grace"),
    ("label empty", {"labels": {"queue": ""}}, "labels.queue", "labels.queue"),
    ("label blank", {"labels": {"working": "  "}}, "labels.working", "labels.working"),
    ("label a number", {"labels": {"ready": 5}}, "labels.ready", "labels.ready"),
    ("label with a comma", {"labels": {"working": "orion,working"}}, "labels.working", "labels.working"),
    ("label over 50 characters", {"labels": {"failed": "f" * 51}}, "labels.failed", "labels.failed"),
    ("label with a trailing space", {"labels": {"ready": "ready "}}, "labels.ready", "labels.ready"),
    ("stage_prefix of 50 characters", {"labels": {"stage_prefix": "s" * 50}}, "labels.stage_prefix",
     "labels.stage_prefix"),
    ("priority a string", {"labels": {"priority": "orion-p0"}}, "labels.priority", "labels.priority"),
    ("priority with an empty name", {"labels": {"priority": [""]}}, "labels.priority", "labels.priority"),
    ("priority with a comma", {"labels": {"priority": ["p0,p1"]}}, "labels.priority", "labels.priority"),
    ("priority name too long", {"labels": {"priority": ["p" * 51]}}, "labels.priority", "labels.priority"),
    ("priority twice", {"labels": {"priority": ["p0", "p0"]}}, "labels.priority", "labels.priority"),
    ("priority with a leading space", {"labels": {"priority": [" p0"]}}, "labels.priority",
     "labels.priority"),
    ("trusted_authors a string", {"trusted_authors": "alice"}, "trusted_authors", "trusted_authors"),
    ("trusted_authors with an empty login", {"trusted_authors": [""]}, "trusted_authors", "trusted_authors"),
    ("trusted_authors with a space", {"trusted_authors": [" bob"]}, "trusted_authors", "trusted_authors"),
    ("a label with NUL", {"labels": {"queue": "or\x00ion"}}, "labels.queue", "labels.queue"),
    ("a label with a newline inside", {"labels": {"ready": "or\nion"}}, "labels.ready", "labels.ready"),
    ("a label with a bidi override", {"labels": {"failed": "a\u202eb"}}, "labels.failed", "labels.failed"),
    ("a priority label with ESC", {"labels": {"priority": ["p\x1b0"]}}, "labels.priority", "labels.priority"),
    ("a dashboard title with a newline", {"dashboard": {"title": "a\nb"}}, "dashboard.title",
     "dashboard.title"),
    ("trusted_authors with a number", {"trusted_authors": [5]}, "trusted_authors", "trusted_authors"),
    ("permission not a role", {"trigger": {"permission": "owner"}}, "trigger.permission",
     "trigger.permission"),
    ("permission capitalised", {"trigger": {"permission": "Write"}}, "trigger.permission",
     "trigger.permission"),
    ("trigger not a mapping", {"trigger": "write"}, "trigger", "trigger"),
    ("timeout negative", {"run": {"timeout": -1}}, "run.timeout", "run.timeout"),
    ("idle_timeout a word", {"run": {"idle_timeout": "soon"}}, "run.idle_timeout", "run.idle_timeout"),
    ("dispatch workflow a path", {"dispatch": {"workflow": "../x.yml"}}, "dispatch.workflow",
     "dispatch.workflow"),
    ("dispatch workflow not yaml", {"dispatch": {"workflow": "worker"}}, "dispatch.workflow",
     "dispatch.workflow"),
    ("dispatch max_runs zero", {"dispatch": {"max_runs": 0}}, "dispatch.max_runs", "dispatch.max_runs"),
]


@pytest.mark.parametrize("why,doc,key,where", BAD, ids=[b[0] for b in BAD])
def test_bad_configs_are_rejected_by_both(why: str, doc: Any, key: str, where: str) -> None:
    error = loader_error(doc)
    assert error is not None, f"{why}: the loader accepted {doc!r}"
    assert key in error, error
    errors = schema_errors(doc)
    assert errors, f"{why}: {SCHEMA_FILE} accepted {doc!r}, which the loader rejects ({error})"
    assert any(e.startswith(where or "(top level)") for e in errors), errors


# What only the loader can reject: rules across keys, and JSON's single number type.
LOADER_ONLY = [
    ("stale_after below 3 x interval", {"heartbeat": {"interval": 60, "stale_after": "2m"}},
     "heartbeat.stale_after"),
    ("two labels the same", {"labels": {"ready": "orion"}}, "labels"),
    ("two labels the same but for case", {"labels": {"ready": "Orion"}}, "labels.ready"),
    ("stage_prefix begins a label", {"labels": {"stage_prefix": "orion"}}, "labels.stage_prefix"),
    ("interval under a second", {"heartbeat": {"interval": "500ms", "stale_after": 3}}, "heartbeat.interval"),
    ("a duration over a week", {"heartbeat": {"stale_after": "169h"}}, "heartbeat.stale_after"),
    ("kill_grace over 7s", {"run": {"kill_grace": "8s"}}, "run.kill_grace"),
    ("kill_grace not under stale_after / 3", {"heartbeat": {"interval": 1, "stale_after": 6},
                                              "run": {"kill_grace": 2}}, "run.kill_grace"),
    ("priority is the queue label", {"labels": {"priority": ["orion"]}}, "labels.priority"),
    ("priority is a stage label", {"labels": {"priority": ["orion-stage-x"]}}, "labels.priority"),
    ("priority twice but for case", {"labels": {"priority": ["p0", "P0"]}}, "labels.priority"),
    ("max_attempts a whole float", {"retry": {"max_attempts": 2.0}}, "retry.max_attempts"),
]


@pytest.mark.parametrize("why,doc,key", LOADER_ONLY, ids=[b[0] for b in LOADER_ONLY])
def test_what_only_the_loader_rejects(why: str, doc: Any, key: str) -> None:
    assert not schema_errors(doc)
    error = loader_error(doc)
    assert error is not None and key in error, (why, error)


# -- the two agree on documents they have never seen ------------------------------------------

VALUES = st.sampled_from([
    "2m", "90s", "500ms", "1h", "0s", "0", "-5s", "5d", "5 minutes", "", " ", "orion", "todo",
    "orion-ready", "my-bot", "write", "admin", "none", "Write", 3, 1, 0, -1, 2.5, 600, True, None, [],
    ["alice"], [""], [3], ["orion"], ["a,b"], ["p0", "p0"], {"a": 1}, *getattr(loader, "PERMISSIONS", ()),
])
KEYS = st.sampled_from(sorted(LEAVES) + ["labels.colour", "heartbeats", "run.timeouts"])


def _cross_key_rules_hold(doc: dict[str, Any]) -> bool:
    """The rules the schema cannot express (its description names them)."""
    beat, run = doc.get("heartbeat", {}), doc.get("run", {})
    try:  # parse_duration refuses more than a week, which a unit makes inexpressible in the schema
        interval = parse_duration(beat.get("interval", Config.heartbeat_interval))
        stale = parse_duration(beat.get("stale_after", Config.stale_after))
        grace = parse_duration(run.get("kill_grace", Config.kill_grace))
        longest = parse_duration(beat["max_interval"]) if "max_interval" in beat else None
    except ValueError:
        return False
    stretch = longest is None or (longest >= interval and longest * stale / interval <= loader.MAX_DURATION)
    durations = (interval >= loader.MIN_INTERVAL and stale >= 3 * interval
                 and grace <= loader.MAX_KILL_GRACE and grace < stale / 3 and stretch)
    distinct = [f.name for f in dataclasses.fields(loader.Labels)
                if f.name not in ("stage_prefix", "priority")]
    given = doc.get("labels", {})
    names = {**{k: getattr(loader.Labels(), k) for k in distinct},
             **{k: v for k, v in given.items() if k in distinct}}
    folded = [name.casefold() for name in names.values()]
    prefix = given.get("stage_prefix", loader.Labels().stage_prefix).casefold()
    taken = {*folded, f"{names['queue']}-paused".casefold()}
    own = all(p.casefold() not in taken and not p.casefold().startswith(prefix)
              for p in given.get("priority", []))
    return (durations and len(set(folded)) == len(distinct) and not any(n.startswith(prefix) for n in folded)
            and own)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=4))
def test_schema_and_loader_agree(pairs: list[tuple[str, Any]]) -> None:
    doc: dict[str, Any] = {}
    for path, value in pairs:
        section, _, key = path.partition(".")
        if key:
            if not isinstance(doc.get(section), dict):
                doc[section] = {}
            doc[section][key] = value
        else:
            doc[section] = value
    schema_ok = not schema_errors(doc)
    expected = schema_ok and _cross_key_rules_hold(doc)
    error = loader_error(doc)
    assert (error is None) == expected, (
        f"{doc!r}: the schema says {'valid' if schema_ok else schema_errors(doc)}, "
        f"the loader says {error or 'valid'}"
    )
