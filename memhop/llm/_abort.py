"""Cutting an HTTP request that is already on the wire when its ``cancel`` event is set.

The SDK call blocks in a socket read for as long as the model takes, so a flag
checked between steps cannot stop it. ``Aborter`` hooks the HTTP client: each
request it sends on a thread inside ``watch(cancel)`` reports the connection it
opens (through the HTTP stack's public ``trace`` request extension), and a
watcher thread polls ``cancel``; once set, it shuts the socket down, which wakes
the blocked read at once (the SDK then fails the request, and the caller reads the
set event as a cancellation). Requests carry ``Connection: close`` so each one
opens its own connection: a reused connection would report none.

A request still connecting is not cut: the connect timeout bounds it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["CONNECTION_CLOSE", "POLL_S", "Aborter"]

POLL_S = 0.05
"""How often a watcher looks at its ``cancel`` event, in seconds."""
CONNECTION_CLOSE = {"Connection": "close"}


class _Slot:
    """The connection of one request in flight, and whether it was cut."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stream: Any = None
        self._cut = False

    def trace(self, event: str, info: Any) -> None:
        """The ``trace`` extension: keep the stream a connect (or TLS start) returns."""
        stream = info.get("return_value") if isinstance(info, dict) else None
        if not event.endswith(".complete") or not hasattr(stream, "get_extra_info"):
            return
        with self._lock:
            self._stream = stream
            cut = self._cut
        if cut:
            _shutdown(stream)

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            stream = self._stream
        if stream is not None:
            _shutdown(stream)


def _shutdown(stream: Any) -> None:
    with contextlib.suppress(Exception):  # already closed, or not a socket stream
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)


class Aborter:
    """Give ``on_request`` to the HTTP client's request hooks; wrap each call in ``watch``."""

    def __init__(self) -> None:
        self._local = threading.local()

    def on_request(self, request: Any) -> None:
        """Request hook: a request sent inside ``watch`` reports its connection to the slot."""
        slot: _Slot | None = getattr(self._local, "slot", None)
        if slot is not None:
            request.extensions["trace"] = slot.trace

    @contextlib.contextmanager
    def watch(self, cancel: threading.Event | None) -> Iterator[None]:
        """Cut this thread's request if ``cancel`` is set before the body ends."""
        if cancel is None:
            yield
            return
        slot = _Slot()
        done = threading.Event()

        def watcher() -> None:
            while not done.wait(POLL_S):
                if cancel.is_set():
                    slot.cut()
                    return

        thread = threading.Thread(target=watcher, name="memhop-llm-cancel", daemon=True)
        self._local.slot = slot
        thread.start()
        try:
            yield
        finally:
            self._local.slot = None
            done.set()
            thread.join()
