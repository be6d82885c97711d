"""`orion-action pause` / `resume`: a queue-wide switch stored on GitHub (docs/adr/0017).

The queue is paused while the repository has a label named `<queue>-paused` (labels.paused);
its description is the reason. A person flips the same switch from the web interface by
creating or deleting that label under Issues -> Labels. Claims read it (one request each) and
claim nothing while it exists; runs already holding issues are not touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from orion_action.config import Config
from orion_action.errors import ExitCode, NotClaimed
from orion_action.ports import GitHubPort

Log = Callable[[str], None]
PAUSE_COLOR = "B60205"
DESCRIPTION_MAX = 100  # GitHub's limit on a label description
DEFAULT_REASON = "paused with orion-action pause"


@dataclass(frozen=True)
class Paused:
    label: str
    reason: str  # the label's description; may be empty (a person made it without one)

    def line(self) -> str:
        why = f": {self.reason}" if self.reason.strip() else ""
        return (
            f"the queue is paused (the repository has the label {self.label!r}){why}; "
            f"nothing is claimed until `orion-action resume` or a person deletes that label"
        )


def read_pause(gh: GitHubPort, config: Config) -> Paused | None:
    """The switch as GitHub has it now: one GET of the label (404 = not paused)."""
    name = config.labels.paused
    found = gh.get_label(name)
    return None if found is None else Paused(name, found[1])


def refuse_if_paused(gh: GitHubPort, config: Config) -> None:
    """Raise NotClaimed (exit 75) while the queue is paused."""
    paused = read_pause(gh, config)
    if paused is not None:
        raise NotClaimed(paused.line())


def pause_command(gh: GitHubPort, config: Config, log: Log, reason: str | None) -> int:
    name = config.labels.paused
    why = " ".join((reason or DEFAULT_REASON).split())[:DESCRIPTION_MAX]
    outcome = gh.ensure_label(name, PAUSE_COLOR, why)
    already = {"created": "", "updated": " (it already was; reason updated)"}.get(outcome, " (already)")
    print(f"paused{already}: the label {name!r} exists, reason {why!r}; runs in flight go on", flush=True)
    log(f"pause: {gh.requests} API requests")
    return int(ExitCode.OK)


def resume_command(gh: GitHubPort, config: Config, log: Log) -> int:
    name = config.labels.paused
    if gh.delete_label(name):
        print(f"resumed: the label {name!r} is deleted; runs may claim again", flush=True)
    else:
        print(f"not paused: the repository has no label {name!r}; nothing to do", flush=True)
    log(f"resume: {gh.requests} API requests")
    return int(ExitCode.OK)
