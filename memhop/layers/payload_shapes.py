"""What the domain-load readers match Go's compact JSON payloads with.

Go's ``encoding/json`` writes no whitespace and its keys in field order, so
a payload as Go and memhop write it matches one anchored pattern per record
type. The readers built on these pieces (``content_fields``, ``topic_rows``,
``edge_clocks``) decode anything else in full, or leave it to their caller.
"""

from __future__ import annotations

from collections.abc import Mapping

from memhop.errors import CorruptionError, CRCMismatchError, DeserializationError

__all__ = ["DAMAGE", "I64", "INT", "U64", "UINT", "UINT_DIGITS", "u8_digits"]

DAMAGE = (CRCMismatchError, CorruptionError, DeserializationError)
"""What a record that will not read raises (the engine counts it)."""
U64 = 1 << 64
I64 = 1 << 63
UINT_DIGITS = rb"(?:0|[1-9][0-9]*)"
UINT = rb"(" + UINT_DIGITS + rb")"
INT = rb"(-?" + UINT_DIGITS + rb")"


def u8_digits(members: Mapping[int, int] | None = None) -> dict[bytes, int]:
    """A u8's digits -> its value, as its member where ``members`` has one, for 0..255.

    A number over 255 is missing: the full decode names the error.
    """
    named = members or {}
    return {str(n).encode(): named.get(n, n) for n in range(0x100)}
