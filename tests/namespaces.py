"""Run a command "on another machine": Linux namespaces that change what the liveness judge
sees of its own machine (docs/design.md section 11).

* :func:`other_machine_cmd`: another host name, another boot id and machine id, its own PID
  namespace (another box, or a VM: nothing of the claim's process table is visible).
* :func:`rebooted_cmd`: the same host name and machine id, a new boot id (the claim's machine
  after a reboot).
* :func:`other_container_cmd`: the same kernel (same boot id, host name and machine id) but
  another PID namespace (a second container on the same host).

Each returns an argv list: ``subprocess.run(other_machine_cmd([...]), ...)``. The command runs
under ``unshare -m -u -p -f --mount-proc`` (new mount, UTS and PID namespaces, /proc remounted
for the new PID namespace); identity files are bind-mounted over the real ones inside the
mount namespace only, after /proc is remounted (a bind made before --mount-proc would be
hidden by the fresh /proc). The network namespace is shared, so loopback servers stay
reachable. Needs root (CAP_SYS_ADMIN).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Sequence

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"
MACHINE_ID_PATH = "/etc/machine-id"

# $1: host name or "" (keep); $2: boot id file or ""; $3: machine id file or ""; the rest: argv.
# The identity files are removed once bind-mounted: the mount keeps the inode alive, so
# nothing is left behind in /tmp whatever happens to the command.
_SCRIPT = r"""
set -e
host=$1; boot=$2; mach=$3; shift 3
if [ -n "$host" ]; then hostname "$host"; fi
if [ -n "$boot" ]; then mount --bind "$boot" /proc/sys/kernel/random/boot_id; rm -f "$boot"; fi
if [ -n "$mach" ]; then mount --bind "$mach" /etc/machine-id; rm -f "$mach"; fi
exec "$@"
"""


def available() -> str | None:
    """None when namespaces can be used here, else why not (for a clear failure)."""
    if os.geteuid() != 0:
        return "needs root for unshare -m -u -p"
    for tool in ("unshare", "mount", "hostname"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


def _identity_file(kind: str, value: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"orion-ns-{kind}-")
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(value + "\n")
    os.chmod(path, 0o444)
    return path


def namespaced_cmd(argv: Sequence[str], *, host: str | None = None, boot_id: str | None = None,
                   machine_id: str | None = None) -> list[str]:
    """argv run in new mount, UTS and PID namespaces; each identity given is overridden."""
    if not argv:
        raise ValueError("no command")
    boot = _identity_file("boot", boot_id) if boot_id else ""
    mach = _identity_file("machine", machine_id) if machine_id else ""
    if machine_id and not os.path.exists(MACHINE_ID_PATH):
        raise RuntimeError(f"{MACHINE_ID_PATH} does not exist: cannot bind over it")
    return ["unshare", "-m", "-u", "-p", "-f", "--mount-proc", "sh", "-c", _SCRIPT, "sh",
            host or "", boot, mach, *argv]


def new_boot_id() -> str:
    return str(uuid.uuid4())


def other_machine_cmd(argv: Sequence[str], host: str = "other-host", boot_id: str | None = None,
                      machine_id: str | None = None) -> list[str]:
    """argv "on another machine": other host name, boot id and machine id, own process table."""
    return namespaced_cmd(argv, host=host, boot_id=boot_id or new_boot_id(),
                          machine_id=machine_id or uuid.uuid4().hex)


def rebooted_cmd(argv: Sequence[str], boot_id: str | None = None) -> list[str]:
    """argv on this machine after a reboot: same host name and machine id, new boot id."""
    return namespaced_cmd(argv, boot_id=boot_id or new_boot_id())


def other_container_cmd(argv: Sequence[str], host: str | None = None) -> list[str]:
    """argv in another container on this kernel: same boot id, another PID namespace (and,
    if given, another host name)."""
    return namespaced_cmd(argv, host=host)
