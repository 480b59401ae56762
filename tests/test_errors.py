"""The error tree keeps upstream's codes and code_of follows cause chains."""

from __future__ import annotations

import pytest

import memhop

CODES = {
    memhop.ConfigError: 1001,
    memhop.InvalidQueryError: 1003,
    memhop.NotFoundError: 3001,
    memhop.AgentNotFoundError: 3002,
    memhop.StorageIOError: 5001,
    memhop.ClosedError: 5002,
    memhop.InvalidMagicError: 5003,
    memhop.CRCMismatchError: 5004,
    memhop.CorruptionError: 5005,
    memhop.SerializationError: 5006,
    memhop.DeserializationError: 5007,
    memhop.OperationCancelledError: 5008,
    memhop.LLMError: 9002,
}


@pytest.mark.parametrize(("cls", "code"), CODES.items(), ids=lambda v: getattr(v, "__name__", v))
def test_each_error_carries_upstreams_code(cls: type[memhop.MemHopError], code: int) -> None:
    """Every class answers its Go code and is caught by the root."""
    exc = cls("boom")
    assert exc.code == code
    assert memhop.code_of(exc) == code
    assert isinstance(exc, memhop.MemHopError)
    assert str(exc) == "boom"


def test_agent_not_found_is_a_not_found() -> None:
    """A host catching NotFoundError also catches an unknown agent."""
    assert issubclass(memhop.AgentNotFoundError, memhop.NotFoundError)
    assert not issubclass(memhop.NotFoundError, memhop.AgentNotFoundError)


def test_code_of_finds_the_first_coded_error_in_the_chain() -> None:
    """A plain exception wrapping a memhop error reports the wrapped code; others report 0."""
    inner = memhop.CRCMismatchError("bad frame")
    outer = RuntimeError("while reading")
    outer.__cause__ = inner
    assert memhop.code_of(outer) == 5004
    assert memhop.code_of(ValueError("plain")) == 0
    assert memhop.code_of(None) == 0


def test_an_explicit_code_overrides_the_class_default() -> None:
    """A strict-scan refusal keeps the original failure's code."""
    assert memhop.CorruptionError("x", code=5004).code == 5004
