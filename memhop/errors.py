"""One error root for memhop, carrying upstream MemHop's numeric codes.

::

    MemHopError                     .code
    ├── ConfigError                 1001  bad configuration, nothing touched
    ├── InvalidQueryError           1003  bad argument from the host
    ├── NotFoundError               3001  absent, never "unreadable"
    │   └── AgentNotFoundError      3002
    ├── StorageIOError              5001  the OS refused (lock, write, fsync, mmap)
    ├── ClosedError                 5002
    ├── InvalidMagicError           5003
    ├── CRCMismatchError            5004
    ├── CorruptionError             5005
    ├── SerializationError          5006
    ├── DeserializationError        5007
    ├── OperationCancelledError     5008
    └── LLMError                    9002

An I/O or decode failure never becomes ``NotFoundError``: "cannot read" and
"is not there" are different answers. Causes are chained with ``raise ... from``.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "AgentNotFoundError",
    "CRCMismatchError",
    "ClosedError",
    "Code",
    "ConfigError",
    "CorruptionError",
    "DeserializationError",
    "InvalidMagicError",
    "InvalidQueryError",
    "LLMError",
    "MemHopError",
    "NotFoundError",
    "OperationCancelledError",
    "SerializationError",
    "StorageIOError",
    "code_of",
]


class Code(IntEnum):
    """Upstream's error numbers; 1002 and 9001 are retired and never reused."""

    CONFIG = 1001
    INVALID_QUERY = 1003
    NOT_FOUND = 3001
    AGENT_NOT_FOUND = 3002
    IO = 5001
    CLOSED = 5002
    INVALID_MAGIC = 5003
    CRC_MISMATCH = 5004
    CORRUPTION = 5005
    SERIALIZATION = 5006
    DESERIALIZATION = 5007
    CANCELLED = 5008
    LLM = 9002


class MemHopError(Exception):
    """Root of every error memhop raises; ``code`` is upstream's number."""

    default_code: int = 0

    def __init__(self, message: str = "", *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code: int = self.default_code if code is None else code


class ConfigError(MemHopError):
    default_code = Code.CONFIG


class InvalidQueryError(MemHopError):
    default_code = Code.INVALID_QUERY


class NotFoundError(MemHopError):
    default_code = Code.NOT_FOUND


class AgentNotFoundError(NotFoundError):
    default_code = Code.AGENT_NOT_FOUND


class StorageIOError(MemHopError):
    default_code = Code.IO


class ClosedError(MemHopError):
    default_code = Code.CLOSED


class InvalidMagicError(MemHopError):
    default_code = Code.INVALID_MAGIC


class CRCMismatchError(MemHopError):
    default_code = Code.CRC_MISMATCH


class CorruptionError(MemHopError):
    default_code = Code.CORRUPTION


class SerializationError(MemHopError):
    default_code = Code.SERIALIZATION


class DeserializationError(MemHopError):
    default_code = Code.DESERIALIZATION


class OperationCancelledError(MemHopError):
    default_code = Code.CANCELLED


class LLMError(MemHopError):
    default_code = Code.LLM


def code_of(exc: BaseException | None) -> int:
    """Return the code of the first memhop error in ``exc``'s cause chain, else 0."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemHopError):
            return int(current.code)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return 0
