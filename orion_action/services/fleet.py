"""Several repositories, one worker pool and one reconciler (docs/adr/0021-several-repositories.md).

`run --next`, `reconcile` and `status` take `--repo` more than once, and go through the same
path as one repository (services/wrapper.py, services/reconcile.py; ADR 0051). Each
repository keeps its own GitHubPort: its own request counter and budget, its own login and
trusted set, its own labels and pause switch. What is shared is the configuration file and
the process. The order across repositories is the pure `pick_order_across` (core/queue.py);
this module only lists and claims across them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orion_action.core.issue import Issue
from orion_action.core.queue import pick_order_across
from orion_action.errors import NotClaimed
from orion_action.services.claiming import (
    MAX_NEXT_CANDIDATES,
    Claim,
    Claimer,
    empty_queue,
    queued_candidates,
)

Log = Callable[[str], None]


# -- run --next ------------------------------------------------------------------------------


def claim_next_across(
    claimers: Sequence[Claimer], stage: str | None, require: Sequence[str], log: Log
) -> tuple[Claimer, Claim]:
    """`run --next` across several repositories, each through its own Claimer (so its own
    token budget, login and trusted set): the claim, and the claimer (so the repository) that
    won it. `run --issue N` names one issue of one repository and takes no part here."""
    config = claimers[0].config
    by_name = {c.gh.full_name: c for c in claimers}
    queued: list[tuple[str, Issue]] = []
    paused = []
    for name, c in by_name.items():
        try:
            queued += [(name, i) for i in queued_candidates(c.gh, c.config, require)]
        except NotClaimed as exc:  # the queue of this repository is paused
            log(f"{name}: {exc}; skipping this repository")
            paused.append(name)
    if len(paused) == len(by_name):
        raise NotClaimed(f"every repository's queue is paused ({', '.join(paused)}); nothing is claimed")
    order = pick_order_across(queued, config.labels.priority, list(by_name))
    if not order:
        raise NotClaimed(f"{empty_queue(config, require)} in {', '.join(by_name)}")
    for name, issue in order[:MAX_NEXT_CANDIDATES]:
        c = by_name[name]
        log(f"{name}#{issue.number}: claiming")
        try:
            return c, c.claim(issue, stage)
        except NotClaimed as exc:
            log(f"{name}#{issue.number}: {exc}; trying the next queued issue")
    raise NotClaimed(
        f"none of the {min(len(order), MAX_NEXT_CANDIDATES)} first queued issues could be claimed"
    )
