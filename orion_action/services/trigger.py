"""The trigger check: a run starts only on text a person with enough access approved.

Anyone with triage access can add a label, and the worker runs with the workflow's secrets
(an agent's API key, a token that can push). So every claim, on every path (`--issue`,
`--next`, `--drain`, several repositories, a dispatched run), asks GitHub who last added the
queue label and checks that person's access against `trigger.permission`; and because the
label approves what that person read, the title and body must not have changed since
(docs/adr/0033-every-claim-checks-who-queued-it.md, docs/adr/0034-the-label-approves-the-text.md).

It also refuses an issue whose latest queueing by a person was cancelled, even if the cancel
label is gone since (ADR 0061) or orion's own queue label came back after it (ADR 0085).

Cost: one GraphQL query (the `labeled`, `unlabeled` and `renamed` timeline events and the body's last edit;
one more per 100 such events, docs/adr/0046) and the collaborator permission: two requests per
claim, none with `trigger.permission: none`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import NoReturn

from orion_action.config import PERMISSIONS, Config
from orion_action.core.cancelled import cancel_against_a_persons_queueing, last_event
from orion_action.core.issue import Logins, trusted_set
from orion_action.errors import GitHubError, NotClaimed, UsageError
from orion_action.ports import GitHubPort, Queued, QueueHistory

Log = Callable[[str], None]
EDITED = "the issue was edited after it was queued; add the label again to approve the new text"


class Refused(NotClaimed):
    """The issue may not run: it has left the queue with a comment saying why (exit 75)."""


def at_least(have: str, need: str) -> bool:
    """Whether access level `have` is `need` or higher (unknown levels count as none)."""
    rank = {level: i for i, level in enumerate(PERMISSIONS)}
    return rank.get(have, 0) >= rank[need]


def check_actor_argument(actor: str | None) -> None:
    """`--actor ''` would read as "no actor": a usage error, never a skipped check."""
    if actor is not None and not actor.strip():
        raise UsageError("--actor needs a login: an empty one cannot be checked (leave --actor out)")


def approve(
    gh: GitHubPort,
    config: Config,
    n: int,
    read_at: datetime | None,
    actor: str | None,
    log: Log,
    own: Callable[[], str | None],
    history: QueueHistory | None = None,
) -> None:
    """Raise Refused (exit 75) unless a person with `trigger.permission` queued issue `n` and
    its title and body have not changed since. The issue's text must have been read (at GitHub
    time `read_at`; None: no text is used here, as in dispatch) no earlier than that label:
    the text the command gets is then the text the person approved.
    A refused issue loses the queue label and gets one comment; a GitHub failure raises
    (nothing is known, nothing runs, the issue stays queued for a retry).

    Who queued it: the last one to add the queue label, if they have the access; orion puts
    the label back when it requeues an issue, and when orion's own login (`own()`, or a trusted
    author) lacks the access, as an Actions token or an App does, that label carries the
    approval of the one before it, for the same text.
    `actor` (the `issues` event's sender) is who the action believes added the label; GitHub's
    events are the authority, since the label may have been added again since.

    `history`: the history the claimer read, with the text or after it (ADR 0063). One query
    gives no order between the issue and the events it reads, so the text counts as read no
    later than the issue's row was last stamped (`updated_at`: every label added moves it), not
    at the answer's time: a label newer than the text in hand is seen as such. (Read after the
    text, a later stamp changes nothing: both `read_at` and the stamp then follow the label.)"""
    need = config.trigger_permission
    if need == "none":
        return
    if history is None:
        history = gh.queue_history(n, config.labels.queue, config.labels.cancel)
    elif read_at is not None and history.issue is not None and history.issue.updated_at is not None:
        read_at = min(read_at, history.issue.updated_at)
    refuse_if_cancelled(gh, config, n, history, own)
    if not history.labelled:
        # No information, no run; but the label stays: GitHub's event list may lag a label
        # just added, and the next attempt asks again.
        raise NotClaimed(f"trigger: GitHub lists nobody who added the `{config.labels.queue}` label to "
                         f"#{n} yet, so nobody with {need} access is known to have approved it; not running")
    queued, have = _approver(gh, config, n, history, own)
    if actor is not None and actor.lower() != queued.login.lower():
        log(f"#{n}: GitHub says {queued.login} queued it, not {actor}: checking {queued.login}")
    changed = history.text_changed_at
    # GitHub's times are whole seconds: an edit in the label's own second may have come after it.
    labelled_at = queued.at.replace(microsecond=0)
    if changed is not None and changed.replace(microsecond=0) >= labelled_at:
        _refuse(gh, config, n, f"orion-refused-{queued.event_id}", EDITED)
    if read_at is not None and read_at.replace(microsecond=0) < labelled_at:
        # The issue was read before this label: the text in hand may predate an edit that the
        # person approved; the next attempt reads it again.
        raise NotClaimed(f"trigger: issue #{n} was queued again while being claimed; not running")
    log(f"trigger: {queued.login} has {have} access (trigger.permission: {need}); the text is as queued")


def refuse_if_cancelled(gh: GitHubPort, config: Config, n: int, history: QueueHistory,
                        own: Callable[[], str | None]) -> None:
    """Raise NotClaimed (exit 75) when a cancel still stands against the issue's latest
    queueing by a person in GitHub's record, even if the cancel label is gone (a cancel sweep
    that paused between its two label removals can take off a cancel a person added since: ADR
    0061) or orion queued the issue since (a stale requeue: ADR 0085), and leave the queue as
    the sweep would, without the queue label. The token's login is asked only when a cancel
    label was ever added."""
    lab = config.labels
    events = history.label_events
    if not any(e.added and e.of(lab.cancel) for e in events):
        return
    queued = last_event(events, lab.queue)
    if queued is None or not queued.added:
        # The issue was read queued, but GitHub's record does not show the label on yet: it
        # lags a requeue, and an older cancel must not take that queueing. Ask again later.
        raise NotClaimed(f"trigger: GitHub's label events of #{n} do not show its {lab.queue!r} label yet; "
                         "not running")
    orion: Logins | None = None

    def is_orion(login: str) -> bool:
        nonlocal orion
        if orion is None:  # asked only now: the token's login may cost a request (GET /user)
            orion = trusted_set(own(), config.trusted_authors)
        return orion.has(login)

    cancel = cancel_against_a_persons_queueing(events, lab.queue, lab.cancel, is_orion)
    if cancel is None:
        return
    gh.remove_label(n, lab.queue)
    who = _code(cancel.login) if cancel.login else "someone"
    raise NotClaimed(f"issue #{n} was cancelled: {who} added the {lab.cancel!r} label at "
                     f"{cancel.at:%Y-%m-%d %H:%M:%S} UTC, after it was queued, and no person has taken it "
                     f"off since; the {lab.queue!r} label is off: add it again to run the issue")


def _approver(
    gh: GitHubPort, config: Config, n: int, history: QueueHistory, own: Callable[[], str | None]
) -> tuple[Queued, str]:
    """The `labeled` event that approves issue `n`, and its actor's access; refuses when the
    last one is by someone without the access (orion's own labels pass the turn back)."""
    need = config.trigger_permission
    for queued in reversed(history.labelled):
        have = gh.collaborator_permission(queued.login)
        if at_least(have, need):
            return queued, have
        # Asked only now: the token's login may cost a request (GET /user).
        if not trusted_set(own(), config.trusted_authors).has(queued.login):
            _refuse(gh, config, n, f"orion-refused-{queued.event_id}",
                    f"{_code(queued.login)} queued this issue and has {have} access to {gh.full_name}; "
                    f"trigger.permission needs {need} or more to start a run")
    last = history.labelled[-1]
    _refuse(gh, config, n, f"orion-refused-{last.event_id}",
            f"nobody with {need} access queued this issue: only orion's own login {_code(last.login)} "
            f"added the `{config.labels.queue}` label, and it has no such access itself")


def passes(gh: GitHubPort, config: Config, n: int, log: Log, own: Callable[[], str | None]) -> bool:
    """For dispatch: whether a run for issue `n` would pass the check (a refused issue leaves
    the queue with its comment, as a run's refusal does). GitHub failures count as no."""
    try:
        approve(gh, config, n, None, None, log, own)
    except NotClaimed as exc:
        log(f"dispatch: not starting a run for #{n}: {exc}")
        return False
    except GitHubError as exc:
        log(f"dispatch: not starting a run for #{n}: the trigger check failed ({exc})")
        return False
    return True


def _code(login: str) -> str:
    """A login shown without mentioning (and so notifying) anyone."""
    return f"`{login.replace('`', '')}`"


def _refuse(gh: GitHubPort, config: Config, number: int, marker: str, why: str) -> NoReturn:
    """Take the issue out of the queue and say why, once: only the refuser whose removal found
    the label (or may have: its answer lost) comments, so that racing claimers leave one
    comment between them."""
    if gh.remove_label(number, config.labels.queue) is not False:
        gh.post_comment(number, f"<!-- {marker} -->\n**orion did not start a run**: {why}.\n", marker=marker)
    raise Refused(f"trigger: issue #{number}: {why}; the {config.labels.queue!r} label is off: someone "
                  f"with {config.trigger_permission} access may add it again to run it")
