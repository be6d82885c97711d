"""Configuration: `.github/orion.yml` (or `--config PATH`), validated on load.

A missing default file means defaults; a missing explicit `--config` file is an error.
Every error names the file and the key, so a person can fix it from one line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orion_action.errors import ConfigError

DEFAULT_PATH = Path(".github/orion.yml")

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
MAX_DURATION = 7 * 24 * 3600.0  # beyond a week a value is a typo, and datetime arithmetic overflows
MIN_INTERVAL = 1.0  # a faster beat only burns the token's budget
DEFAULT_INTERVAL = 120.0
DEFAULT_STALE_AFTER = 600.0
DEFAULT_MAX_INTERVAL = 1800.0  # heartbeat.max_interval at the default heartbeat (ADR 0045)
# A cancelled Actions job gets SIGINT, SIGTERM 7.5 s later and SIGKILL 2.5 s after that: the
# child's grace and the writes that end the run (wrapper.HAND_BACK_DEADLINE_S) must fit in that.
MAX_KILL_GRACE = 7.0
LABEL_MAX = 50  # GitHub's limit on a label name
# What no name or title may hold: control characters (NUL, newline, ESC...), line and paragraph
# separators, and bidirectional controls (they make a name read as something it is not). The
# JSON Schema's `label` pattern excludes the same.
UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# A GitHub login: letters, digits, '-' and '_' (Enterprise Managed Users' logins end in
# _shortcode), beginning with a letter or digit; an App's bot ends in "[bot]".
LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}(?:\[bot\])?")
MAX_DEPTH = 32  # nesting of the YAML document; orion.yml needs 3, and the composer recurses

# Repository permission levels, lowest first (GitHub's role names); `none` in `trigger.permission`
# turns the trigger check off.
PERMISSIONS = ("none", "read", "triage", "write", "maintain", "admin")


@dataclass(frozen=True)
class Labels:
    queue: str = "orion"
    working: str = "orion-working"
    ready: str = "orion-ready"
    failed: str = "orion-failed"
    stage_prefix: str = "orion-stage-"
    cancel: str = "orion-cancel"  # a person adds it to stop a run (or keep a queued issue from one)
    priority: tuple[str, ...] = ()  # `run --next` takes issues carrying the first of these first

    def stage(self, name: str | None) -> str | None:
        return f"{self.stage_prefix}{name}" if name else None

    @property
    def dashboard(self) -> str:
        """The label that marks the dashboard issue (docs/adr/0020): one listing finds it."""
        return f"{self.queue}-dashboard"


@dataclass(frozen=True)
class Config:
    labels: Labels = field(default_factory=Labels)
    heartbeat_interval: float = DEFAULT_INTERVAL
    stale_after: float = DEFAULT_STALE_AFTER
    # heartbeat.max_interval: the longest beat a holder stretches to under load (ADR 0045);
    # 0: unset, resolved in __post_init__.
    heartbeat_max_interval: float = 0.0
    max_attempts: int = 3
    kill_grace: float = 5.0
    trusted_authors: tuple[str, ...] = ()
    trigger_permission: str = "write"  # the least access of whoever's label may start a run
    timeout: float = 0.0  # run.timeout: stop a child that has run this long (0: no limit)
    idle_timeout: float = 0.0  # run.idle_timeout: ...or that has been silent this long (0: no limit)
    pass_token: bool = False  # run.pass_token: the command gets GITHUB_TOKEN and GH_TOKEN (ADR 0031)
    run_user: str = ""  # run.user: orion runs as root, the command as this user (ADR 0032)
    on_signal: str = "cancel"  # run.on_signal: a signal cancels the run, or requeues it (ADR 0043)
    dispatch_workflow: str = ""  # dispatch.workflow: the worker workflow started for queued issues
    dispatch_max_runs: int = 4  # dispatch.max_runs: at most this many of its runs at once
    dashboard_enabled: bool = False  # dashboard.enabled: init makes, reconcile keeps a dashboard issue
    dashboard_title: str = "orion queue"  # dashboard.title: that title
    source: str = "defaults"

    @property
    def renew_deadline(self) -> float:
        """A holder gives up after this long without a completed beat: before anyone may
        presume it dead (stale_after)."""
        return self.stale_after * 2 / 3

    @property
    def longest_stale_after(self) -> float:
        """The longest stale_after a record may promise: a beat stretched to
        heartbeat.max_interval stretches stale_after by the same factor (ADR 0045)."""
        return self.heartbeat_max_interval * self.stale_after / self.heartbeat_interval

    def __post_init__(self) -> None:
        """heartbeat.max_interval unset (ADR 0045): beats stretch up to DEFAULT_MAX_INTERVAL at
        the default heartbeat, and not at all when the operator chose the heartbeat: a tuned
        beat (a fast one in a test, say) stays what it was set to."""
        if not self.heartbeat_max_interval:
            default = (self.heartbeat_interval, self.stale_after) == (DEFAULT_INTERVAL, DEFAULT_STALE_AFTER)
            longest = DEFAULT_MAX_INTERVAL if default else self.heartbeat_interval
            object.__setattr__(self, "heartbeat_max_interval", longest)


def parse_duration(value: Any, allow_zero: bool = False) -> float:
    """Seconds from a number or a string like "90s", "5m", "1h", "500ms" (a limit may be 0: none)."""
    if isinstance(value, bool):
        raise ValueError("expected a duration, got a boolean")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        seconds = float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    else:
        raise ValueError(f'expected a duration like 90, "90s", "5m" or "1h", got {value!r}')
    if not math.isfinite(seconds):
        raise ValueError(f"must be a finite number of seconds, got {value!r}")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        raise ValueError(f"must be {'zero or more' if allow_zero else 'greater than zero'}, got {value!r}")
    if seconds > MAX_DURATION:
        raise ValueError(f"must be at most a week ({MAX_DURATION:g}s), got {value!r}")
    return seconds


# run.on_signal: what a SIGINT/SIGTERM/SIGHUP to the wrapper (a cancelled Actions job) does to the
# run: end it as `cancelled`, as the cancel label does, or hand the issue back (pre-emptible runners).
ON_SIGNAL = ("cancel", "requeue")
TITLE_MAX = 256  # GitHub's limit on an issue title
# A workflow file name in .github/workflows ("" turns dispatching off).
_WORKFLOW = re.compile(r"(?:[A-Za-z0-9._-]+\.ya?ml)?")
_USER = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_.-]{0,31})?")  # a POSIX user name, or "" (run.user)

# Per-key parsers: each takes the YAML value and returns the setting, or raises ValueError with
# the message a person reads after "file: key: ".


def _duration(value: Any) -> float:
    return parse_duration(value)


def _limit(value: Any) -> float:
    return parse_duration(value, allow_zero=True)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, got {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"expected a whole number of at least 1, got {value!r}")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return str(value)

    return parse


def _matching(pattern: re.Pattern[str], expected: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise ValueError(f"expected {expected}, got {value!r}")
        return value

    return parse


def _title(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > TITLE_MAX or UNSEEN.search(value):
        raise ValueError(f"expected a non-empty title of at most {TITLE_MAX} characters "
                         f"and no control characters, got {value!r}")
    return value


def _logins(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError("expected a list of GitHub logins")
    bad = next((v for v in value if not LOGIN.fullmatch(v)), None)
    if bad is not None:
        raise ValueError(f"{bad!r} is not a GitHub login (letters, digits, '-' and '_', "
                         f"at most 64, optionally ending in [bot]): it could never match")
    return tuple(value)


def _label_list(value: Any) -> tuple[str, ...]:
    """Distinct label names GitHub accepts and a label filter cannot split."""
    if not isinstance(value, list):
        raise ValueError(f"expected a list of label names, got {type(value).__name__}")
    for name in value:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"expected non-empty label names, got {name!r}")
        if "," in name or name != name.strip() or len(name) > LABEL_MAX or UNSEEN.search(name):
            raise ValueError(
                f"a label name has no commas, no control characters, no white space at either end "
                f"and at most {LABEL_MAX} characters, got {name!r}"
            )
    if len({n.casefold() for n in value}) != len(value):
        raise ValueError("each label may appear once (GitHub ignores case in label names)")
    return tuple(value)


@dataclass(frozen=True)
class Key:
    """One configuration key: how its value is read, and the Config (or Labels, for `labels.*`)
    field it sets; an absent key leaves that field's default."""

    parse: Callable[[Any], Any]
    field: str


def _label(name: str) -> Key:
    return Key(_name, name)


# The file's keys, section by section (a section's keys are a mapping; `trusted_authors` is a
# list). The published JSON Schema (docs/orion.schema.json) describes the same keys.
_SCHEMA: dict[str, Any] = {
    "labels": {
        "queue": _label("queue"),
        "working": _label("working"),
        "ready": _label("ready"),
        "failed": _label("failed"),
        "stage_prefix": _label("stage_prefix"),
        "cancel": _label("cancel"),
        "priority": Key(_label_list, "priority"),
    },
    "heartbeat": {
        "interval": Key(_duration, "heartbeat_interval"),
        "stale_after": Key(_duration, "stale_after"),
        "max_interval": Key(_duration, "heartbeat_max_interval"),
    },
    "retry": {"max_attempts": Key(_count, "max_attempts")},
    "run": {
        "kill_grace": Key(_duration, "kill_grace"),
        "timeout": Key(_limit, "timeout"),
        "idle_timeout": Key(_limit, "idle_timeout"),
        "pass_token": Key(_flag, "pass_token"),
        "user": Key(_matching(_USER, "a user name of the machine"), "run_user"),
        "on_signal": Key(_one_of(ON_SIGNAL), "on_signal"),
    },
    "trusted_authors": Key(_logins, "trusted_authors"),
    "trigger": {"permission": Key(_one_of(PERMISSIONS), "trigger_permission")},
    "dispatch": {
        "workflow": Key(
            _matching(_WORKFLOW, 'a workflow file name like "worker.yml" or ""'), "dispatch_workflow"
        ),
        "max_runs": Key(_count, "dispatch_max_runs"),
    },
    "dashboard": {"enabled": Key(_flag, "dashboard_enabled"), "title": Key(_title, "dashboard_title")},
}


def parse_config(data: Any, source: str) -> Config:
    """Validate a parsed YAML document against the schema; raise ConfigError naming the key."""

    def fail(key: str, why: str) -> ConfigError:
        return ConfigError(f"{source}: {key}: {why}")

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    settings: dict[str, Any] = {}
    labels: dict[str, Any] = {}
    given: set[str] = set()  # the keys the file sets (a bound blames one of them, not a default)
    for section, value in data.items():
        spec = _SCHEMA.get(section)
        if spec is None:
            raise fail(str(section), f"unknown key (known: {', '.join(_SCHEMA)})")
        if isinstance(spec, Key):
            items, keys = [(section, value)], {section: spec}
        elif not isinstance(value, dict):
            raise fail(section, f"expected a mapping, got {type(value).__name__}")
        else:
            items = [(f"{section}.{k}", v) for k, v in value.items()]
            keys = {f"{section}.{k}": spec[k] for k in spec}
        for name, item in items:
            key = keys.get(name)
            if key is None:
                raise fail(name, f"unknown key (known: {', '.join(spec)})")
            try:
                parsed = key.parse(item)
            except ValueError as exc:
                raise fail(name, str(exc)) from None
            (labels if section == "labels" else settings)[key.field] = parsed
            given.add(name)
    config = Config(labels=Labels(**labels), source=source, **settings)
    for check in _BOUNDS:
        check(config, fail, frozenset(given))
    return config


def _interval_floor(
    config: Config, fail: Callable[[str, str], ConfigError], given: frozenset[str]
) -> None:
    if config.heartbeat_interval < MIN_INTERVAL:
        interval = config.heartbeat_interval
        raise fail("heartbeat.interval", f"must be at least {MIN_INTERVAL:g}s, got {interval:g}s")


def _stale_after_floor(
    config: Config, fail: Callable[[str, str], ConfigError], given: frozenset[str]
) -> None:
    if config.stale_after < 3 * config.heartbeat_interval:
        interval, stale = config.heartbeat_interval, config.stale_after
        if "heartbeat.stale_after" not in given:  # blame the key the user set, not a default
            raise fail(
                "heartbeat.interval",
                f"{interval:g}s is too long for heartbeat.stale_after ({stale:g}s, the default), which "
                f"must be at least 3 x the interval: use an interval of at most {stale / 3:g}s, or set "
                f"heartbeat.stale_after to at least {3 * interval:g}s",
            )
        raise fail(
            "heartbeat.stale_after",
            f"must be at least 3 x heartbeat.interval ({interval:g}s), got {stale:g}s: set it to at "
            f"least {3 * interval:g}s or shorten heartbeat.interval",
        )


def _max_interval_range(
    config: Config, fail: Callable[[str, str], ConfigError], given: frozenset[str]
) -> None:
    """A stretched beat stretches stale_after by the same factor (ADR 0045): both must stay
    within what a duration may be."""
    if config.heartbeat_max_interval < config.heartbeat_interval or config.longest_stale_after > MAX_DURATION:
        raise fail(
            "heartbeat.max_interval",
            f"must be at least heartbeat.interval ({config.heartbeat_interval:g}s), and stretch "
            f"stale_after (x {config.stale_after / config.heartbeat_interval:g}) to at most a week; "
            f"got {config.heartbeat_max_interval:g}s",
        )


def _kill_grace_ceiling(
    config: Config, fail: Callable[[str, str], ConfigError], given: frozenset[str]
) -> None:
    if config.kill_grace > MAX_KILL_GRACE:
        raise fail(
            "run.kill_grace",
            f"must be at most {MAX_KILL_GRACE:g}s (a cancelled Actions job is killed about 10s after "
            f"its first signal), got {config.kill_grace:g}s",
        )
    if config.kill_grace >= config.stale_after / 3:  # the gap between renew_deadline and stale_after
        raise fail(
            "run.kill_grace",
            f"must be less than heartbeat.stale_after / 3 ({config.stale_after / 3:g}s): a holder that "
            f"gives up at the renew deadline must have stopped its child before it may be presumed "
            f"dead; got {config.kill_grace:g}s",
        )


def _labels_apart(
    config: Config, fail: Callable[[str, str], ConfigError], given: frozenset[str]
) -> None:
    _check_labels(config.labels, fail)


# Bounds between keys, checked in this order once every key has been read.
_BOUNDS: tuple[Callable[[Config, Callable[[str, str], ConfigError], frozenset[str]], None], ...] = (
    _interval_floor, _stale_after_floor, _max_interval_range, _kill_grace_ceiling, _labels_apart,
)


def _check_labels(labels: Labels, fail: Callable[[str, str], ConfigError]) -> None:
    """Label names GitHub accepts and that cannot be mistaken for one another (GitHub compares
    label names without regard to case)."""
    named = {f"labels.{k}": getattr(labels, k) for k in ("queue", "working", "ready", "failed", "cancel")}
    for key, name in [*named.items(), ("labels.stage_prefix", labels.stage_prefix)]:
        if "," in name:
            raise fail(key, f"must not contain a comma (GitHub's label filter splits on it), got {name!r}")
        if name != name.strip():
            raise fail(key, f"must not start or end with white space, got {name!r}")
        if UNSEEN.search(name):
            raise fail(key, f"must not contain control characters or line breaks, got {name!r}")
        limit = LABEL_MAX - 1 if key == "labels.stage_prefix" else LABEL_MAX
        if len(name) > limit:
            raise fail(key, f"must be at most {limit} characters (GitHub's label limit is {LABEL_MAX}), "
                            f"got {len(name)}")
    seen: dict[str, str] = {}
    for key, name in named.items():
        if name.casefold() in seen:
            raise fail(key, f"{name!r} is already {seen[name.casefold()]}: each label must be different")
        seen[name.casefold()] = key
    prefix = labels.stage_prefix.casefold()
    for key, name in named.items():
        if name.casefold().startswith(prefix):
            raise fail(
                "labels.stage_prefix",
                f"{labels.stage_prefix!r} begins {key} ({name!r}): that label would be taken for a "
                f"stage label and removed with the stage",
            )
    taken = {**{n.casefold(): k for k, n in named.items()},
             labels.dashboard.casefold(): "the dashboard label"}
    for name in labels.priority:
        if name.casefold() in taken or name.casefold().startswith(prefix):
            what = taken.get(name.casefold(), f"a stage label ({labels.stage_prefix}*)")
            raise fail("labels.priority", f"{name!r} is also {what}: a priority label must be one of its own")


class _Loader(yaml.SafeLoader):
    """yaml.safe_load's loader, stricter where a config file must not be ambiguous or costly:
    a key given twice in one mapping is an error (YAML would silently keep the last, so a
    reviewer could read `permission: write` above a later `permission: none`); nesting is
    bounded (the composer recurses: 20,000 '[' overflowed Python's stack); and a value its
    constructor cannot build (a 5,000-digit integer, a 13th month) is an error at its line."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except ValueError as exc:  # int(), float() and date() refusing a scalar
            why = str(exc).split(";")[0][:100]
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this value ({why})", node.start_mark
            ) from None

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[type, Any]] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: overriding is its point
                    continue
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, (str, int, float, bool)) or key is None:
                    if (type(key), key) in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {str(key)[:60]!r}", key_node.start_mark
                        )
                    seen.add((type(key), key))
        return super().construct_mapping(node, deep)


def load_config(path: str | None) -> Config:
    """Load and validate the configuration; `path=None` means the default file, if any."""
    file = Path(path) if path else DEFAULT_PATH
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if path:
            raise ConfigError(f"{file}: configuration file not found") from None
        return Config()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file}: not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{file}: invalid YAML{where}: {problem}") from None
    return parse_config(data, str(file))
