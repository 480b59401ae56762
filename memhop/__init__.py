"""memhop: an AI agent's memory in one ``.meh`` file (a Python port of MemHop)."""

from memhop._version import __version__
from memhop.errors import (
    AgentNotFoundError,
    ClosedError,
    ConfigError,
    CorruptionError,
    CRCMismatchError,
    DeserializationError,
    InvalidMagicError,
    InvalidQueryError,
    LLMError,
    MemHopError,
    NotFoundError,
    OperationCancelledError,
    SerializationError,
    StorageIOError,
    code_of,
)

__all__ = [
    "AgentNotFoundError",
    "CRCMismatchError",
    "ClosedError",
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
    "__version__",
    "code_of",
]
