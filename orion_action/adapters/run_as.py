"""`run.user`: orion runs as root, the command as another user (ADR 0032).

A command of the same user as orion can read orion's memory (and, as root, anything); one
of another user cannot read a root process's /proc/PID/environ, /proc/PID/mem or files
mode 0600. The guardian drops the command's privileges in the forked child before exec
(guardian.drop_privileges).
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass

from orion_action.adapters.guardian import drop_privileges
from orion_action.errors import UsageError


@dataclass(frozen=True)
class RunAs:
    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]
    home: str

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """The command's environment names the user it runs as, as `su -` would."""
        return {**env, "HOME": self.home, "USER": self.name, "LOGNAME": self.name}

    @property
    def ids(self) -> tuple[int, int, tuple[int, ...]]:
        return self.uid, self.gid, self.groups

    def give(self, path: str) -> None:
        """Make a file orion created for the command (issue file, progress file) its own."""
        os.chown(path, self.uid, self.gid)


def resolve(name: str, workdir: str) -> RunAs:
    """The user `run.user` names, checked before anything is claimed: orion must be root, the
    user must exist and not be root, and must be able to use `workdir` (the command's
    working directory). Raises UsageError (exit 64) saying which."""
    if os.geteuid() != 0:
        raise UsageError(
            f"run.user: {name}: orion-action must run as root to run the command as another user "
            f"(it runs as uid {os.geteuid()}); drop run.user or run the runner as root"
        )
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise UsageError(f"run.user: no user {name!r} on this machine") from None
    if entry.pw_uid == 0:
        raise UsageError(f"run.user: {name} is root (uid 0): it would keep nothing from the command")
    user = RunAs(
        name, entry.pw_uid, entry.pw_gid, tuple(os.getgrouplist(name, entry.pw_gid)), entry.pw_dir or "/"
    )
    if not _can_use(user, workdir):
        raise UsageError(
            f"run.user: {name} cannot enter and read the working directory {workdir}; "
            f"give it access (e.g. chown -R {name} the checkout) before the run"
        )
    return user


def _can_use(user: RunAs, workdir: str) -> bool:
    """Whether `user` can enter and list `workdir`: asked in a child that has become the user
    (access() as root would say yes to anything)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            drop_privileges(user.uid, user.gid, user.groups)
            code = 0 if os.access(workdir, os.R_OK | os.X_OK) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
