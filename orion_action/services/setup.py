"""`orion-action init`: create or update the repository's labels, then say what to do next.

Every label the configuration names is created, the cancel and priority labels too: in the web
interface a label must exist before a person can add it to an issue, and those are the ones a
person adds. Idempotent: a label that already has the right colour and description is left
alone, one with another colour or description is updated (and reported, so a person who
customised it sees what changed), a missing one is created. Stage labels (`orion-stage-<name>`)
are not created here: orion adds them itself (adding a label to an issue creates it), and they
are display only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from orion_action import __version__
from orion_action.adapters.github import GitHubRepo
from orion_action.config import Config
from orion_action.core.pause import pause_reason

Log = Callable[[str], None]
# The `@vN` that the printed next steps name: the package's own major version (the version
# policy, docs/releasing.md: one major version everywhere).
MAJOR = __version__.split(".")[0]


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


def next_steps(config: Config) -> str:
    lab = config.labels
    return "\n".join(
        [
            "Next steps:",
            "  1. Copy examples/orion-reconcile.yml and examples/orion-worker.yml (or an agent's",
            "     examples/orion-agent-*.yml) from the orion-action repository into",
            f"     .github/workflows/ (change OWNER in `uses: OWNER/orion-action@v{MAJOR}` and pin",
            "     a release's commit SHA), and put your own command in the",
            "     worker's `run:` input. The worker needs a self-hosted Linux runner; the reconciler",
            "     runs on a hosted runner every 15 minutes or on yours every 5 (see docs/operations.md).",
            "  2. If the worker and the reconciler use different tokens (e.g. a personal or App token",
            "     on the runner, GITHUB_TOKEN in the reconciler), list BOTH logins under",
            "     `trusted_authors:` in .github/orion.yml: the reconciler must trust the worker's",
            "     claims and the worker the reconciler's releases (a worker that sees a release by an",
            "     untrusted login of the claim in its way exits 64 and says so).",
            f"  3. Queue an issue by adding the {lab.queue!r} label.",
            f"  4. Never remove the {lab.working!r} label by hand while a run holds the issue: use",
            "     `orion-action release --issue N` (it refuses a live holder unless --force).",
        ]
    )


def init_command(gh: GitHubRepo, config: Config, log: Log) -> int:
    """Create or update the labels the configuration names (and, with dashboard.enabled, the
    dashboard issue and its label); exit 0."""
    gh.check_repo()  # a missing repository or a bad token fails here, with a clear message
    changed = 0
    specs = label_specs(config)
    for spec in specs:
        description = spec.description
        if spec.role == "queue":
            # A paused queue stays paused: the switch is this label's description (ADR 0022).
            found = gh.get_label(spec.name)
            if found is not None and pause_reason(found[1]) is not None:
                description = found[1]
        outcome = gh.ensure_label(spec.name, spec.color, description)
        if outcome != "unchanged":
            changed += 1
        print(f"label {spec.name!r} ({spec.role}): {outcome} (#{spec.color})", flush=True)
    summary = "nothing to change" if changed == 0 else f"{changed} of {len(specs)} labels created or updated"
    if config.dashboard_enabled:
        from orion_action.services import dashboard  # it reads the pause switch, which needs label_specs

        issue, created = dashboard.ensure(gh, config)
        print(
            f"dashboard: issue #{issue.number} "
            + ("created; the next reconcile pass fills it in" if created else "already exists; reused"),
            flush=True,
        )
    log(f"init: {summary} in {gh.full_name} ({gh.requests} requests)")
    print(f"\n{next_steps(config)}", flush=True)
    return 0
