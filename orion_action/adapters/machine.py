"""The local machine: who we are (host, boot id, machine id, process table) and what the
process table says about a recorded pid. Linux first, with psutil fallbacks elsewhere."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from collections.abc import Callable
from pathlib import Path

import psutil

from orion_action.core.liveness import BOOT_TIME_PREFIX, BOOT_TIME_TOLERANCE_S, Machine, ProcessSighting
from orion_action.core.record import Holder

BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")
MACHINE_ID_PATHS = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
PID_NS_PATH = "/proc/self/ns/pid"
# The process table's random id (ADR 0028): one file per boot and mount of /dev/shm (tmpfs,
# empty at every boot), made by the first orion-action process that needs it.
TABLE_ID_PATH = Path("/dev/shm/orion-action-table-id")
_TABLE_ID_HEX = 32


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def boot_id() -> str:
    return _read(BOOT_ID_PATH) or f"{BOOT_TIME_PREFIX}{psutil.boot_time():.0f}"


def machine_id() -> str:
    return next((v for v in (_read(p) for p in MACHINE_ID_PATHS) if v), "")


def _namespace_inode() -> str:
    try:
        return str(os.stat(PID_NS_PATH).st_ino)
    except OSError:
        return ""


def _read_table_id(path: Path) -> tuple[str, float] | None:
    """The id and the boot time it was made for, if the file holds a well-formed pair."""
    try:
        text = path.read_text(encoding="ascii")[:100]
        ident, boot = text.split()
        if len(ident) == _TABLE_ID_HEX and int(ident, 16) >= 0:
            return ident, float(boot)
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return None


def _write_table_id(path: Path, boot: float, replace: bool) -> None:
    """Publish a new random id whole: written aside, then linked in (first writer wins) or,
    for a stale id, renamed over it (last writer wins; either way every process then reads
    one id from the file, and one that read another meanwhile only judges by heartbeat)."""
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        aside.write_text(f"{secrets.token_hex(_TABLE_ID_HEX // 2)} {boot:.0f}\n", encoding="ascii")
        aside.chmod(0o644)
        if replace:
            os.replace(aside, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            aside.unlink()


def table_id(path: Path | None = None) -> str:
    """This process table's random id, made at first use after boot; "" when there is none.

    Host name, machine id, boot id and the PID namespace's inode (a kernel constant,
    4026531836, for every host's initial namespace) are all copied into VMs restored from one
    memory snapshot; a random id made after the restore is not. It records the wall-clock boot
    time it was made for: a restored snapshot's clock is set forward, its boot time moves,
    and the id is made anew, as it is when /dev/shm is emptied (ADR 0028)."""
    path = path or TABLE_ID_PATH
    boot = psutil.boot_time()

    def fresh(found: tuple[str, float] | None) -> str:
        return found[0] if found is not None and abs(found[1] - boot) <= BOOT_TIME_TOLERANCE_S else ""

    ident = fresh(_read_table_id(path))
    if not ident:
        _write_table_id(path, boot, replace=path.exists())
        ident = fresh(_read_table_id(path))
    return ident


def pid_namespace() -> str:
    """The process table's identity as records name it (`pid_ns`): the PID namespace's inode
    and the table's random id; "" (unknown: only the heartbeat decides) without either."""
    inode, ident = _namespace_inode(), table_id()
    return f"{inode}:{ident}" if inode and ident else ""


def this_machine() -> Machine:
    return Machine(
        host=socket.gethostname(), boot_id=boot_id(), machine_id=machine_id(), pid_ns=pid_namespace()
    )


class _Hidden(Exception):
    """A process exists but this user may not read it (another user under hidepid, or AccessDenied)."""


def _unseen(signal_it: Callable[[int, int], None], ident: int) -> bool:
    """Whether `ident` names processes we cannot see: signal 0 is refused, not unanswered."""
    try:
        signal_it(ident, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def _start(pid: int) -> float | None:
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        return p.create_time()
    except psutil.ZombieProcess:
        return None
    except psutil.AccessDenied:
        raise _Hidden from None
    except psutil.NoSuchProcess:
        if _unseen(os.kill, pid):
            raise _Hidden from None
        return None


def start_ticks(pid: int) -> int | None:
    """The process's start in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def process_start(pid: int) -> float | None:
    """Start time of the process now at `pid`, or None if there is none (or only a zombie,
    or one we may not read)."""
    try:
        return _start(pid)
    except _Hidden:
        return None


def group_alive(pgid: int | None) -> bool:
    """Whether any live (non-zombie) process is still in process group `pgid`."""
    if not pgid:
        return False
    for p in psutil.process_iter(["status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return False


def sight(pid: int, child_pgid: int | None) -> ProcessSighting | None:
    """What this process table says about a holder's pids; None when it cannot tell, because
    the process at `pid` or the child's group exists but is hidden from us (/proc mounted
    with hidepid, the wrapper run by another user). A hidden process is not a dead one."""
    try:
        start = _start(pid)
    except _Hidden:
        return None
    alive = group_alive(child_pgid)
    if not alive and child_pgid and _unseen(os.killpg, child_pgid):
        return None
    ticks = start_ticks(pid) if start is not None else None
    return ProcessSighting(wrapper_start=start, child_group_alive=alive, wrapper_start_ticks=ticks)


def this_holder() -> Holder:
    """The running wrapper as a claim record names it."""
    m = this_machine()
    me = os.getpid()
    return Holder(
        host=m.host,
        boot_id=m.boot_id,
        machine_id=m.machine_id,
        pid_ns=m.pid_ns,
        pid=me,
        pid_start=psutil.Process(me).create_time(),
        pid_start_ticks=start_ticks(me),
    )
