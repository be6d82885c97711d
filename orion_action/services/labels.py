"""The labels the configuration names, with the colour and description `init` gives each;
`pause` and `resume` rewrite the queue label's description (ADR 0022)."""

from __future__ import annotations

from dataclasses import dataclass

from orion_action.config import Config


@dataclass(frozen=True)
class LabelSpec:
    role: str
    name: str
    color: str  # six hex digits, no '#'
    description: str  # GitHub allows at most 100 characters


def label_specs(config: Config) -> list[LabelSpec]:
    """The labels the configuration names: the four orion reads and writes, the cancel label
    and the priority labels (highest first) a person adds."""
    lab = config.labels
    count = len(lab.priority)
    priorities = [
        LabelSpec("priority", name, "D4C5F9",
                  f"orion priority {rank} of {count}: queued issues carrying it are worked first")
        for rank, name in enumerate(lab.priority, 1)
    ]
    return [
        LabelSpec(
            "queue",
            lab.queue,
            "1D76DB",
            "Queued for an orion worker: add this label to have the issue worked",
        ),
        LabelSpec(
            "working",
            lab.working,
            "FBCA04",
            "The lock: an orion run holds this issue. Never remove by hand; use orion-action release",
        ),
        LabelSpec("ready", lab.ready, "0E8A16", "An orion run finished successfully; its results are ready"),
        LabelSpec(
            "failed", lab.failed, "B60205", "An orion run failed or its retry budget is spent: needs a person"
        ),
        LabelSpec(
            "cancel", lab.cancel, "D93F0B", "Stop this issue's orion run, or keep it from starting one"
        ),
        *priorities,
    ]
