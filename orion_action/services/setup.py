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

from orion_action import __version__
from orion_action.config import Config
from orion_action.core.pause import pause_reason
from orion_action.ports import GitHubPort
from orion_action.services import dashboard
from orion_action.services.labels import label_specs

Log = Callable[[str], None]
# The `@vN` that the printed next steps name: the package's own major version (the version
# policy, docs/releasing.md: one major version everywhere).
MAJOR = __version__.split(".")[0]


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


def init_command(gh: GitHubPort, config: Config, log: Log) -> list[str]:
    """Create or update the labels the configuration names (and, with dashboard.enabled, the
    dashboard issue and its label); returns what to tell the user."""
    said = []
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
        said.append(f"label {spec.name!r} ({spec.role}): {outcome} (#{spec.color})")
    summary = "nothing to change" if changed == 0 else f"{changed} of {len(specs)} labels created or updated"
    if config.dashboard_enabled:
        issue, created = dashboard.ensure(gh, config)
        said.append(
            f"dashboard: issue #{issue.number} "
            + ("created; the next reconcile pass fills it in" if created else "already exists; reused")
        )
    log(f"init: {summary} in {gh.full_name} ({gh.requests} requests)")
    said.append(f"\n{next_steps(config)}")
    return said
