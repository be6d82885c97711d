"""orion-action: GitHub issues as a safe work queue for long-running workers.

The label is the lock; a claim record (pid, process start time, boot id, heartbeat)
in one hidden issue comment decides whether anyone still holds it.
"""

__version__ = "1.0.0"
