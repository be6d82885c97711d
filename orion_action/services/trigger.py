"""The trigger check: only a label added by someone with enough access starts a run.

Anyone with triage access can add a label, and the worker runs with the workflow's secrets
(an agent's API key, a token that can push). So before claiming, the person who added the
label (the `issues` event's sender, passed as `--actor`) must have at least
`trigger.permission` on the repository: one request to the collaborator permission API.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from orion_action.config import PERMISSIONS, Config
from orion_action.errors import NotClaimed


class PermissionSource(Protocol):
    """The one thing the check needs from GitHub (adapters.github.GitHubRepo has it)."""

    full_name: str

    def collaborator_permission(self, login: str) -> str: ...


def at_least(have: str, need: str) -> bool:
    """Whether access level `have` is `need` or higher (unknown levels count as none)."""
    rank = {level: i for i, level in enumerate(PERMISSIONS)}
    return rank.get(have, 0) >= rank[need]


def check_trigger(
    gh: PermissionSource, config: Config, actor: str | None, log: Callable[[str], None]
) -> None:
    """Raise NotClaimed (exit 75) when `actor` lacks `trigger.permission`; no actor (a
    dispatch, a schedule, a person at a terminal) or `permission: none` means no check."""
    need = config.trigger_permission
    if not actor or need == "none":
        return
    have = gh.collaborator_permission(actor)
    if not at_least(have, need):
        raise NotClaimed(
            f"trigger: {actor} has {have} access to {gh.full_name}, and trigger.permission "
            f"needs {need} or more to start a run; nothing was claimed"
        )
    log(f"trigger: {actor} has {have} access (trigger.permission: {need})")
