"""The local machine: who we are (host, boot id, machine id, PID namespace) and what the
process table says about a recorded pid. Linux first, with psutil fallbacks elsewhere."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psutil

from orion_action.core.liveness import BOOT_TIME_PREFIX, Machine, ProcessSighting
from orion_action.core.record import Holder

BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")
MACHINE_ID_PATHS = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
PID_NS_PATH = "/proc/self/ns/pid"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def boot_id() -> str:
    return _read(BOOT_ID_PATH) or f"{BOOT_TIME_PREFIX}{psutil.boot_time():.0f}"


def machine_id() -> str:
    return next((v for v in (_read(p) for p in MACHINE_ID_PATHS) if v), "")


def pid_namespace() -> str:
    try:
        return str(os.stat(PID_NS_PATH).st_ino)
    except OSError:
        return ""


def this_machine() -> Machine:
    return Machine(
        host=socket.gethostname(), boot_id=boot_id(), machine_id=machine_id(), pid_ns=pid_namespace()
    )


def process_start(pid: int) -> float | None:
    """Start time of the process now at `pid`, or None if there is none (or only a zombie)."""
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return None
        return p.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
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


def sight(pid: int, child_pgid: int | None) -> ProcessSighting:
    return ProcessSighting(wrapper_start=process_start(pid), child_group_alive=group_alive(child_pgid))


def this_holder() -> Holder:
    """The running wrapper as a claim record names it."""
    m = this_machine()
    me = os.getpid()
    return Holder(
        host=m.host, boot_id=m.boot_id, machine_id=m.machine_id, pid_ns=m.pid_ns,
        pid=me, pid_start=psutil.Process(me).create_time(),
    )
