"""The rig proxy's internals as the r3 demos' LaggingProxy (demos-protocol/r3rig.py) overrides
them. Two changes since 0a77c48:

1. ``Proxy._forward(h, body, token)`` became ``_forward(h, body, token, helper=False)``: the
   proxy answers conditional GETs (ADR 0044) by asking the emulator first with the caller's
   uncharged helper alias (``_not_modified`` calls ``self._forward(..., helper=True)``). An
   override with the old three-argument shape would raise TypeError there. Adapted: such an
   override is wrapped to accept ``helper``; the flag reaches the base ``_forward`` (through a
   thread-local) when the override calls ``super()._forward(h, body, token)``, so the override's
   own logic (LaggingProxy's list lag) applies to the helper read too: a conditional listing is
   judged against the same lagging view the caller would get.

2. The trigger check reads the issue through GraphQL (ADR 0046/0063): a read sent as
   ``POST /graphql``, answered by the proxy itself (the emulator has no GraphQL). LaggingProxy's
   ``token_mode == "ambiguous-writes"`` ("reads answered, writes applied but answered 502")
   tells reads from writes by the HTTP method, so it would forward that read to the emulator
   and answer 502. Adapted: in that mode a ``POST /graphql`` is dispatched as the read it is
   (by the base proxy). "down" mode is untouched (every request 503).

Nothing else changes: list lag, holds, faults and 503/502 answers are the demo's own.
"""

from __future__ import annotations

import inspect
import threading
from types import ModuleType
from typing import Any

_local = threading.local()


def install(proxy_module: ModuleType) -> None:
    Proxy = proxy_module.Proxy
    base_forward = Proxy._forward
    base_dispatch = Proxy._dispatch

    def _forward(self: Any, h: Any, body: bytes, token: str | None, helper: bool | None = None) -> Any:
        if helper is None:
            helper = getattr(_local, "helper", False)
        return base_forward(self, h, body, token, helper=helper)

    def adapt_forward(old: Any) -> Any:
        def _forward(self: Any, h: Any, body: bytes, token: str | None, helper: bool = False) -> Any:
            before = getattr(_local, "helper", False)
            _local.helper = helper
            try:
                return old(self, h, body, token)
            finally:
                _local.helper = before
        return _forward

    def adapt_dispatch(old: Any) -> Any:
        def _dispatch(self: Any, h: Any, entry: Any, body: bytes, path: str, token: str | None,
                      rule: Any) -> Any:
            mode = getattr(self, "token_mode", {}).get(token or "")
            if mode == "ambiguous-writes" and h.command == "POST" and path == "/graphql":
                return base_dispatch(self, h, entry, body, path, token, rule)
            return old(self, h, entry, body, path, token, rule)
        return _dispatch

    def __init_subclass__(cls: type, **kw: Any) -> None:
        super(Proxy, cls).__init_subclass__(**kw)
        own = cls.__dict__.get("_forward")
        if own is not None and "helper" not in inspect.signature(own).parameters:
            cls._forward = adapt_forward(own)  # type: ignore[attr-defined]
        own = cls.__dict__.get("_dispatch")
        if own is not None:
            cls._dispatch = adapt_dispatch(own)  # type: ignore[attr-defined]

    Proxy._forward = _forward
    Proxy.__init_subclass__ = classmethod(__init_subclass__)
