"""`orion-action pause` / `resume`: a queue-wide switch stored on GitHub, in the queue label's
description (docs/adr/0022-pause-in-the-queue-label.md).

The queue is paused while the description of the queue label (`labels.queue`) starts with the
word "paused"; the rest is the reason. Every read a claim makes anyway (the issue, or the queue
listing of `run --next`) returns the labels with their descriptions, so checking the switch
costs no request. A person flips it from the web interface: Issues -> Labels -> edit the queue
label -> start the description with "paused" (and take the word off to resume).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from orion_action.config import Config
from orion_action.core.issue import Issue
from orion_action.core.pause import PAUSE_WORD, pause_reason
from orion_action.errors import NotClaimed
from orion_action.ports import GitHubPort
from orion_action.services.labels import label_specs

Log = Callable[[str], None]
DESCRIPTION_MAX = 100  # GitHub's limit on a label description
DEFAULT_REASON = "paused with orion-action pause"


@dataclass(frozen=True)
class Paused:
    label: str
    reason: str  # what follows "paused" in the description; may be empty

    def line(self) -> str:
        why = f": {self.reason}" if self.reason.strip() else ""
        return (
            f"the queue is paused (the description of the label {self.label!r} starts with "
            f"{PAUSE_WORD!r}){why}; nothing is claimed until `orion-action resume` or a person "
            f"takes that word off"
        )


def paused_in(issues: Iterable[Issue], config: Config) -> Paused | None:
    """The switch as the issues just read show it: free (the read returned the descriptions).
    Any issue carrying the queue label tells: the description is the repository label's."""
    name = config.labels.queue
    for issue in issues:
        reason = pause_reason(issue.label_description(name))
        if reason is not None:
            return Paused(name, reason)
    return None


def refuse_if_paused(issues: Iterable[Issue], config: Config) -> None:
    """Raise NotClaimed (exit 75) while the queue is paused."""
    paused = paused_in(issues, config)
    if paused is not None:
        raise NotClaimed(paused.line())


def read_pause(gh: GitHubPort, config: Config) -> Paused | None:
    """The switch as GitHub has it now, for `status` and the dashboard: one GET of the label."""
    name = config.labels.queue
    found = gh.get_label(name)
    reason = None if found is None else pause_reason(found[1])
    return None if reason is None else Paused(name, reason)


def _queue_label(config: Config) -> tuple[str, str]:
    spec = next(s for s in label_specs(config) if s.role == "queue")
    return spec.color, spec.description


def pause_command(gh: GitHubPort, config: Config, log: Log, reason: str | None) -> list[str]:
    """Pause the queue; returns what to tell the user. Pausing it again keeps the reason a
    person gave unless a new --reason replaces it, and then says which reason it replaced: a
    reason is never lost in silence."""
    name = config.labels.queue
    color, _ = _queue_label(config)
    was = read_pause(gh, config)
    if was is not None and not (reason or "").strip():
        log(f"pause: {gh.requests} API requests")
        return [f"already paused, reason kept: {was.reason.strip() or '(none)'!r}; pass --reason to "
                f"replace it, or `orion-action resume` to resume"]
    why = " ".join((reason or DEFAULT_REASON).split())
    description = f"{PAUSE_WORD}: {why}"[:DESCRIPTION_MAX]
    gh.ensure_label(name, color, description)
    already = f" (it already was; this replaces the reason {was.reason.strip()!r})" if was is not None else ""
    log(f"pause: {gh.requests} API requests")
    return [f"paused{already}: the label {name!r} now reads {description!r}; runs in flight go on"]


def resume_command(gh: GitHubPort, config: Config, log: Log) -> list[str]:
    """Resume the queue; returns what to tell the user."""
    name = config.labels.queue
    if read_pause(gh, config) is None:
        said = f"not paused: the description of the label {name!r} does not start with 'paused'"
    else:
        color, description = _queue_label(config)
        gh.ensure_label(name, color, description)
        said = f"resumed: the label {name!r} has its usual description again; runs may claim"
    log(f"resume: {gh.requests} API requests")
    return [said]
