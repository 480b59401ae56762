"""Read JSON payloads with Go's ``encoding/json.Unmarshal`` rules.

Unknown keys are ignored, a missing key leaves the zero value, keys match
case-insensitively (Go's simple folding), and ``null`` leaves a scalar or
struct untouched while resetting a slice, map or pointer. Integer fields take
only integer literals (``1.0`` and ``1e3`` are refused) in their Go range, and
ids keep all 64 bits. Invalid UTF-8 and lone surrogates in strings become
U+FFFD. Every refusal is DeserializationError "unmarshal <TypeName>: ...".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import TypeVar

from memhop.errors import DeserializationError
from memhop.records.gojson import I64_MAX, I64_MIN, U8_MAX, U32_MAX, U64_MAX

__all__ = ["FieldReader", "read_object", "read_string"]

_T = TypeVar("_T")

# Go folds ASCII case plus the two non-ASCII runes whose simple case folding
# reaches an ASCII letter: U+017F (long s) and U+212A (Kelvin sign).
_FOLD = str.maketrans(
    {**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}, "\u017f": "s", "\u212a": "k"}
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Object:
    """A decoded JSON object, keeping every key/value pair in document order."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        self.pairs = pairs


class _NegativeZero(int):
    """The literal ``-0``: zero for int64, -0.0 for float64, refused for unsigned."""

    def __repr__(self) -> str:
        return "-0"


def _parse_int(text: str) -> int:
    return _NegativeZero(0) if text == "-0" else int(text)


def _refuse_constant(name: str) -> object:
    msg = f"invalid character in literal {name}"
    raise ValueError(msg)


def _clean(s: str) -> str:
    return _SURROGATE.sub("\ufffd", s)


def _parse(data: bytes, type_name: str) -> object:
    try:
        # surrogateescape turns each invalid byte into one lone surrogate, which
        # _clean later maps to U+FFFD: one replacement per bad byte, as in Go.
        text = bytes(data).decode("utf-8", "surrogateescape")
        return json.loads(
            text,
            object_pairs_hook=_Object,
            parse_int=_parse_int,
            parse_constant=_refuse_constant,
        )
    except (ValueError, RecursionError) as exc:
        msg = f"unmarshal {type_name}: {exc}"
        raise DeserializationError(msg) from exc


def _kind(value: object) -> str:
    if isinstance(value, _Object):
        return "object"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value!r}"
    return "array" if isinstance(value, list) else "string"


def read_object(data: bytes, type_name: str) -> FieldReader:
    """Parse a payload that must be a JSON object (``null`` reads as all zero)."""
    value = _parse(data, type_name)
    if value is None:
        return FieldReader([], type_name)
    if not isinstance(value, _Object):
        msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into {type_name}"
        raise DeserializationError(msg)
    return FieldReader(value.pairs, type_name)


def read_string(data: bytes, type_name: str) -> str:
    """Parse a payload that must be a JSON string (``null`` reads as "")."""
    value = _parse(data, type_name)
    if value is None:
        return ""
    if not isinstance(value, str):
        msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into string"
        raise DeserializationError(msg)
    return _clean(value)


class FieldReader:
    """Typed access to one object's fields; each getter returns Go's zero when absent."""

    __slots__ = ("_type_name", "_values")

    def __init__(self, pairs: list[tuple[str, object]], type_name: str) -> None:
        self._type_name = type_name
        # Every occurrence is kept in order: Go assigns them one after another.
        self._values: dict[str, list[object]] = {}
        for key, value in pairs:
            self._values.setdefault(key.translate(_FOLD), []).append(value)

    def _refuse(self, key: str, value: object, go_type: str) -> DeserializationError:
        msg = f"unmarshal {self._type_name}: cannot unmarshal {_kind(value)} into field {key!r}"
        return DeserializationError(f"{msg} of type {go_type}")

    def _last(self, key: str, convert: Callable[[str, object], _T], zero: _T) -> _T:
        result = zero
        for value in self._values.get(key, ()):
            if value is not None:  # null leaves a scalar as it was
                result = convert(key, value)
        return result

    def _int(self, key: str, value: object, lo: int, hi: int, go_type: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._refuse(key, value, go_type)
        if not lo <= value <= hi or (lo == 0 and isinstance(value, _NegativeZero)):
            raise self._refuse(key, value, go_type)
        return int(value)

    def _u64(self, key: str, value: object) -> int:
        return self._int(key, value, 0, U64_MAX, "uint64")

    def u8(self, key: str) -> int:
        return self._last(key, lambda k, v: self._int(k, v, 0, U8_MAX, "uint8"), 0)

    def u32(self, key: str) -> int:
        return self._last(key, lambda k, v: self._int(k, v, 0, U32_MAX, "uint32"), 0)

    def u64(self, key: str) -> int:
        return self._last(key, self._u64, 0)

    def i64(self, key: str) -> int:
        return self._last(key, lambda k, v: self._int(k, v, I64_MIN, I64_MAX, "int64"), 0)

    def _float(self, key: str, value: object) -> float:
        if isinstance(value, _NegativeZero):
            return -0.0
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._refuse(key, value, "float64")
        try:
            result = float(value)
        except OverflowError:
            result = math.inf
        if not math.isfinite(result):
            raise self._refuse(key, value, "float64")
        return result

    def f64(self, key: str) -> float:
        return self._last(key, self._float, 0.0)

    def _bool(self, key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self._refuse(key, value, "bool")
        return value

    def boolean(self, key: str) -> bool:
        return self._last(key, self._bool, False)

    def _str(self, key: str, value: object) -> str:
        if not isinstance(value, str):
            raise self._refuse(key, value, "string")
        return _clean(value)

    def string(self, key: str) -> str:
        return self._last(key, self._str, "")

    def _pointer(self, key: str, convert: Callable[[str, object], _T]) -> _T | None:
        result: _T | None = None
        for value in self._values.get(key, ()):
            result = None if value is None else convert(key, value)  # null resets to nil
        return result

    def opt_u64(self, key: str) -> int | None:
        return self._pointer(key, self._u64)

    def opt_string(self, key: str) -> str | None:
        return self._pointer(key, self._str)

    def _slice(self, key: str, convert: Callable[[str, object], _T], zero: _T) -> tuple[_T, ...]:
        result: tuple[_T, ...] = ()
        for value in self._values.get(key, ()):
            if value is None:
                result = ()  # null resets a slice to nil
            elif isinstance(value, list):
                # A null element leaves that element at its zero value.
                result = tuple(zero if v is None else convert(key, v) for v in value)
            else:
                raise self._refuse(key, value, "slice")
        return result

    def u64s(self, key: str) -> tuple[int, ...]:
        return self._slice(key, self._u64, 0)

    def strings(self, key: str) -> tuple[str, ...]:
        return self._slice(key, self._str, "")

    def str_map(self, key: str) -> Mapping[str, str]:
        result: dict[str, str] = {}
        for value in self._values.get(key, ()):
            if value is None:
                result = {}  # null resets the map to nil
            elif isinstance(value, _Object):
                # A later object merges into the map an earlier one built, as in Go.
                for k, v in value.pairs:
                    result[_clean(k)] = "" if v is None else self._str(key, v)
            else:
                raise self._refuse(key, value, "map[string]string")
        return result

    def nested(self, key: str, type_name: str) -> FieldReader:
        """Return a reader for a struct field; repeated objects merge, null is ignored."""
        pairs: list[tuple[str, object]] = []
        for value in self._values.get(key, ()):
            if isinstance(value, _Object):
                pairs.extend(value.pairs)
            elif value is not None:
                raise self._refuse(key, value, type_name)
        return FieldReader(pairs, self._type_name)
