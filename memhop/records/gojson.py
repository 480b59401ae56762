"""Write JSON byte-for-byte as Go's ``encoding/json.Marshal`` does.

Go (1.22 and later) differs from Python's ``json`` in three places that show
in payload bytes: floats use the shortest digits with Go's own switch between
fixed and exponent form, strings escape ``<``, ``>``, ``&``, U+2028 and U+2029,
and map keys are sorted. Values out of range for their Go type, and non-finite
floats, raise SerializationError naming the record ("marshal <TypeName>").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal

from memhop.errors import SerializationError

__all__ = ["ObjectWriter", "format_float", "is_u64", "plain_string", "quote_string"]

U8_MAX = 0xFF
U32_MAX = 0xFFFF_FFFF
U64_MAX = 0xFFFF_FFFF_FFFF_FFFF
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",  # Go before 1.22 wrote \u0008 and \u000c for these two
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
# Control characters, quote and backslash, the HTML-sensitive trio, the JS
# line separators, and surrogates (a Python str's stand-in for bad UTF-8).
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    if "\ud800" <= ch <= "\udfff":
        # Go replaces each invalid UTF-8 byte with the escaped replacement rune.
        return "\\ufffd"
    return f"\\u{ord(ch):04x}"


def quote_string(s: str) -> str:
    """Return ``s`` as a Go-escaped JSON string literal, quotes included."""
    if _NEEDS_ESCAPE.search(s) is None:  # most text: a scan, no rebuild
        return f'"{s}"'
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def plain_string(value: object) -> bool:
    """Whether ``value`` is a str that Go writes between its quotes unchanged."""
    return type(value) is str and _NEEDS_ESCAPE.search(value) is None


def is_u64(value: object) -> bool:
    """Whether ``value`` is a plain int (not a bool or an enum member) in Go's uint64."""
    return type(value) is int and 0 <= value <= U64_MAX


def format_float(x: float) -> str:
    """Return ``x`` as Go's float64 encoder writes it (shortest round-trip digits).

    Fixed notation for 1e-6 <= |x| < 1e21 (and zero), exponent form otherwise:
    ``1e-7``, ``1e+21``; integral values carry no ``.0``; ``-0.0`` is ``-0``.
    The caller has already refused NaN and infinities.
    """
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    # repr gives the shortest digits that round-trip, as Go's strconv does;
    # only the layout around them differs.
    sign, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)  # finite, so never 'n' or 'F'
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)  # |x| = digits * 10**exponent
    prefix = "-" if sign else ""
    if abs(x) < 1e-6 or abs(x) >= 1e21:
        point_exp = exponent + len(digits) - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        # Go pads the exponent to two digits, then strips the pad of "e-0X".
        exp_text = f"-{-point_exp}" if point_exp < 0 else f"+{point_exp:02d}"
        return f"{prefix}{mantissa}e{exp_text}"
    if exponent >= 0:
        return prefix + digits + "0" * exponent
    point = len(digits) + exponent
    if point > 0:
        return f"{prefix}{digits[:point]}.{digits[point:]}"
    return f"{prefix}0.{'0' * -point}{digits}"


class ObjectWriter:
    """Build one JSON object, keys in the order written (Go's declaration order)."""

    __slots__ = ("_parts", "_type_name")

    def __init__(self, type_name: str) -> None:
        self._type_name = type_name
        self._parts: list[str] = []

    def _refuse(self, key: str, detail: str) -> SerializationError:
        msg = f"marshal {self._type_name}: field {key!r} {detail}"
        return SerializationError(msg)

    def _put(self, key: str, text: str) -> None:
        self._parts.append(f'"{key}":{text}')

    def _int_value(self, key: str, value: int, lo: int, hi: int) -> int:
        """Return ``value`` as a plain int in Go's ``[lo, hi]``, or refuse it."""
        if type(value) is not int:  # a bool, an IntEnum member, or no integer at all
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._refuse(key, f"is not an integer: {value!r}")
            value = int(value)  # so an IntEnum member writes its number
        if not lo <= value <= hi:
            raise self._refuse(key, f"value {value} is out of range [{lo}, {hi}]")
        return value

    # Each width checks a plain int in line and leaves the rest to ``_int_value``:
    # records are written field by field, so a call saved here is saved per field.

    def u8(self, key: str, value: int, *, omitempty: bool = False) -> None:
        if type(value) is not int or not 0 <= value <= U8_MAX:
            value = self._int_value(key, value, 0, U8_MAX)
        if value or not omitempty:
            self._parts.append(f'"{key}":{value}')

    def u32(self, key: str, value: int, *, omitempty: bool = False) -> None:
        if type(value) is not int or not 0 <= value <= U32_MAX:
            value = self._int_value(key, value, 0, U32_MAX)
        if value or not omitempty:
            self._parts.append(f'"{key}":{value}')

    def u64(self, key: str, value: int, *, omitempty: bool = False) -> None:
        if type(value) is not int or not 0 <= value <= U64_MAX:
            value = self._int_value(key, value, 0, U64_MAX)
        if value or not omitempty:
            self._parts.append(f'"{key}":{value}')

    def i64(self, key: str, value: int, *, omitempty: bool = False) -> None:
        if type(value) is not int or not I64_MIN <= value <= I64_MAX:
            value = self._int_value(key, value, I64_MIN, I64_MAX)
        if value or not omitempty:
            self._parts.append(f'"{key}":{value}')

    def opt_u64(self, key: str, value: int | None) -> None:
        """Write a Go ``*uint64`` with omitempty: absent when None, even 0 otherwise."""
        if value is not None:
            self.u64(key, value)

    def f64(self, key: str, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._refuse(key, f"is not a number: {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self._refuse(key, f"unsupported value {value!r}")
        self._put(key, format_float(number))

    def boolean(self, key: str, value: bool, *, omitempty: bool = False) -> None:
        if not (omitempty and not value):
            self._put(key, "true" if value else "false")

    def _str_text(self, key: str, value: str) -> str:
        if not isinstance(value, str):
            raise self._refuse(key, f"is not a string: {value!r}")
        return quote_string(value)

    def string(self, key: str, value: str, *, omitempty: bool = False) -> None:
        text = self._str_text(key, value)
        if value or not omitempty:
            self._parts.append(f'"{key}":{text}')

    def opt_string(self, key: str, value: str | None) -> None:
        """Write a Go ``*string`` with omitempty: absent when None, even "" otherwise."""
        if value is not None:
            self._put(key, self._str_text(key, value))

    def u64s(self, key: str, values: Iterable[int]) -> None:
        """Write a ``[]uint64``; an empty one is ``[]`` (memhop never writes nil)."""
        texts = [str(self._int_value(key, v, 0, U64_MAX)) for v in values]
        self._put(key, "[" + ",".join(texts) + "]")

    def strings(self, key: str, values: Iterable[str]) -> None:
        """Write a ``[]string``; an empty one is ``[]`` (memhop never writes nil)."""
        self._put(key, "[" + ",".join(self._str_text(key, v) for v in values) + "]")

    def str_map(self, key: str, values: Mapping[str, str]) -> None:
        """Write a ``map[string]string`` with keys sorted, as Go does; empty is ``{}``."""
        items = sorted(values.items())
        body = ",".join(f"{self._str_text(key, k)}:{self._str_text(key, v)}" for k, v in items)
        self._put(key, "{" + body + "}")

    def nested(self, key: str, obj: ObjectWriter) -> None:
        """Write a struct-valued field built by another writer."""
        self._put(key, obj.text())

    def text(self) -> str:
        return "{" + ",".join(self._parts) + "}"

    def to_bytes(self) -> bytes:
        # Surrogates were escaped above, so strict UTF-8 cannot fail here.
        return self.text().encode("utf-8")
