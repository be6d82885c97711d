"""Several repositories, one worker pool and one reconciler (docs/adr/0021-several-repositories.md).

`run --next`, `reconcile` and `status` take `--repo` more than once (reconcile and status
go through one path for one repository or several: services/reconcile.py). Each repository keeps its
own GitHubPort: its own request counter and budget, its own login and trusted set, its own
labels and pause switch. What is shared is the configuration file and the process. The order
across repositories is the pure `pick_order_across` (core/queue.py); this module only lists,
claims and loops the single-repository commands.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orion_action.config import Config
from orion_action.core.issue import Issue
from orion_action.core.queue import pick_order_across
from orion_action.errors import NotClaimed
from orion_action.ports import GitHubPort, Host
from orion_action.services.claiming import (
    MAX_NEXT_CANDIDATES,
    Claim,
    Claimer,
    empty_queue,
    queued_candidates,
)
from orion_action.services.wrapper import Wrapper

Log = Callable[[str], None]


# -- run --next ------------------------------------------------------------------------------


class FleetClaimer(Claimer):
    """`claim_next` across several repositories, each through its own Claimer (so its own
    token budget, login and trusted set). Only `claim_next` is offered: `run --issue N` names
    one issue of one repository. `on_won` learns which repository the claim is in."""

    def __init__(self, claimers: Sequence[Claimer], log: Log, on_won: Callable[[GitHubPort], None]):
        # Not Claimer.__init__: every claim goes through one of `claimers`.
        self.claimers, self.log, self.on_won = list(claimers), log, on_won
        self.config = claimers[0].config

    def claim_next(self, stage: str | None, require: Sequence[str] = ()) -> Claim:
        by_name = {c.gh.full_name: c for c in self.claimers}
        queued: list[tuple[str, Issue]] = []
        paused = []
        for name, c in by_name.items():
            try:
                queued += [(name, i) for i in queued_candidates(c.gh, c.config, require)]
            except NotClaimed as exc:  # the queue of this repository is paused
                self.log(f"{name}: {exc}; skipping this repository")
                paused.append(name)
        if len(paused) == len(by_name):
            raise NotClaimed(f"every repository's queue is paused ({', '.join(paused)}); nothing is claimed")
        order = pick_order_across(queued, self.config.labels.priority, list(by_name))
        if not order:
            raise NotClaimed(f"{empty_queue(self.config, require)} in {', '.join(by_name)}")
        for name, issue in order[:MAX_NEXT_CANDIDATES]:
            c = by_name[name]
            self.log(f"{name}#{issue.number}: claiming")
            try:
                claim = c.claim(issue, stage)
            except NotClaimed as exc:
                self.log(f"{name}#{issue.number}: {exc}; trying the next queued issue")
                continue
            self.on_won(c.gh)
            return claim
        raise NotClaimed(
            f"none of the {min(len(order), MAX_NEXT_CANDIDATES)} first queued issues could be claimed"
        )

    def claim_number(self, number: int, stage: str | None) -> Claim:  # pragma: no cover - cli refuses
        raise NotClaimed("run --issue N takes one --repo")


class FleetWrapper(Wrapper):
    """The claim wrapper over several repositories. Once a claim is won, `self.gh` is that
    repository's adapter, so the holder, the heartbeat, ORION_REPO and the immediate pickup
    all act on the issue's own repository."""

    def __init__(
        self, repos: Sequence[GitHubPort], config: Config, log: Log, env: dict[str, str], host: Host
    ):
        super().__init__(repos[0], config, log, env, host)
        self.repos = list(repos)

    def claimer(self) -> Claimer:
        claimers = []
        for gh in self.repos:
            c = super().claimer()
            c.gh = gh
            claimers.append(c)
        return FleetClaimer(claimers, self.log, self._won)

    def _won(self, gh: GitHubPort) -> None:
        self.gh = gh
