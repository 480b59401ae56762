"""Read JSON payloads with Go's ``encoding/json.Unmarshal`` rules.

Unknown keys are ignored, a missing key leaves the zero value, keys match
case-insensitively (Go's simple folding), and ``null`` leaves a scalar or
struct untouched while resetting a slice, map or pointer. Integer fields take
only integer literals (``1.0`` and ``1e3`` are refused) in their Go range, and
ids keep all 64 bits. Invalid UTF-8 and lone surrogates in strings become
U+FFFD. Every refusal is DeserializationError "unmarshal <TypeName>: ...".

Every record read comes through here, so the usual payload takes a short path:
shared scanners, integer literals left to the C scanner unless the payload
could hold ``-0``, no surrogate cleanup for ASCII strings or for payloads that
cannot hold a surrogate, and one plain dict lookup per field when each key
occurs once and needs no folding. Anything else takes the general path.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence

from memhop.errors import DeserializationError
from memhop.records.gojson import I64_MAX, I64_MIN, U8_MAX, U32_MAX, U64_MAX

__all__ = ["FieldReader", "read_object", "read_string"]

# Go folds ASCII case plus the two non-ASCII runes whose simple case folding
# reaches an ASCII letter: U+017F (long s) and U+212A (Kelvin sign).
_FOLD = str.maketrans(
    {**{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}, "\u017f": "s", "\u212a": "k"}
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Repeated(list[object]):
    """Every value of a key given more than once, in document order."""

    __slots__ = ()


_ABSENT = object()


class _NegativeZero(int):
    """The literal ``-0``: zero for int64, -0.0 for float64, refused for unsigned."""

    def __repr__(self) -> str:
        return "-0"


def _parse_int(text: str) -> int:
    return _NegativeZero(0) if text == "-0" else int(text)


def _refuse_constant(name: str) -> object:
    msg = f"invalid character in literal {name}"
    raise ValueError(msg)


def _scanner(parse_int: Callable[[str], object] | None) -> Callable[[str, int], tuple[object, int]]:
    # A decoded JSON object is the tuple of its key/value pairs in document
    # order; arrays decode to lists, so the two never mix up.
    decoder = json.JSONDecoder(
        object_pairs_hook=tuple, parse_int=parse_int, parse_constant=_refuse_constant
    )
    # decode() only wraps this scanner in whitespace and trailing-data checks.
    scan: Callable[[str, int], tuple[object, int]] = vars(decoder)["scan_once"]
    return scan


# Shared scanners. Integer literals go straight to the C scanner's int()
# unless the payload holds "-0", which only the hook tells apart from "0".
_SCAN = _scanner(None)
_SCAN_NEG_ZERO = _scanner(_parse_int)


def _clean(s: str) -> str:
    # isascii is O(1) on a str, and an ASCII string holds no surrogate.
    return s if s.isascii() else _SURROGATE.sub("\ufffd", s)


def _parse(data: bytes, type_name: str) -> tuple[object, bool]:
    """Return the decoded value and whether its non-ASCII strings may hold surrogates."""
    raw = data if type(data) is bytes else bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # surrogateescape turns each invalid byte into one lone surrogate,
        # which _clean later maps to U+FFFD: one per bad byte, as in Go.
        text = raw.decode("utf-8", "surrogateescape")
        surrogates = True
    else:
        # Valid UTF-8 holds no surrogate, so only a \uD800-\uDFFF escape can
        # make one. ASCII strings need no check, so an ASCII payload (the
        # usual one) skips the scan for escapes.
        surrogates = text.isascii() or "\\ud" in text or "\\uD" in text
    try:
        try:
            # The usual payload is one bare value: scan it straight away.
            value, end = (_SCAN_NEG_ZERO if "-" in text and "-0" in text else _SCAN)(text, 0)
            if end == len(text):
                return value, surrogates
        except (StopIteration, ValueError, RecursionError):
            pass
        # Anything else (surrounding whitespace, a BOM, trailing data, an
        # error) goes through json.loads, for its result or its exact message.
        value = json.loads(
            text, object_pairs_hook=tuple, parse_int=_parse_int, parse_constant=_refuse_constant
        )
    except (ValueError, RecursionError) as exc:
        msg = f"unmarshal {type_name}: {exc}"
        raise DeserializationError(msg) from exc
    return value, surrogates


def _kind(value: object) -> str:
    if isinstance(value, tuple):
        return "object"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value!r}"
    return "array" if isinstance(value, list) else "string"


def read_object(data: bytes, type_name: str) -> FieldReader:
    """Parse a payload that must be a JSON object (``null`` reads as all zero)."""
    value, surrogates = _parse(data, type_name)
    if type(value) is tuple:
        return FieldReader(value, type_name, surrogates=surrogates)
    if value is None:
        return FieldReader((), type_name)
    msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into {type_name}"
    raise DeserializationError(msg)


def read_string(data: bytes, type_name: str) -> str:
    """Parse a payload that must be a JSON string (``null`` reads as "")."""
    value, surrogates = _parse(data, type_name)
    if type(value) is str:
        return _clean(value) if surrogates else value
    if value is None:
        return ""
    msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into string"
    raise DeserializationError(msg)


class FieldReader:
    """Typed access to one object's fields; each getter returns Go's zero when absent.

    ``surrogates`` False promises that no string in ``pairs`` holds a surrogate,
    which lets string getters skip the U+FFFD cleanup.
    """

    __slots__ = ("_surrogates", "_type_name", "_values")

    def __init__(
        self, pairs: Sequence[tuple[str, object]], type_name: str, *, surrogates: bool = True
    ) -> None:
        self._type_name = type_name
        self._surrogates = surrogates
        values = dict(pairs)
        keys = "".join(values)
        # Folding changes only A-Z and two non-ASCII runes: keys in lower-case ASCII (every
        # payload memhop or Go writes) are read as they are, and nothing is remembered of
        # any file's keys, so no state is shared by two DBs of a process.
        if len(values) == len(pairs) and keys.isascii() and keys.islower():
            # Usual case: each key once and already folded.
            self._values: dict[str, object] = values
        else:
            self._values = self._fold_pairs(pairs)

    @staticmethod
    def _fold_pairs(pairs: Sequence[tuple[str, object]]) -> dict[str, object]:
        # Every occurrence is kept in order: Go assigns them one after another.
        # A key given once maps to its value, one given more to a _Repeated.
        values: dict[str, object] = {}
        for key, value in pairs:
            folded = key.translate(_FOLD)
            earlier = values.get(folded, _ABSENT)
            if earlier is _ABSENT:
                values[folded] = value
            elif type(earlier) is _Repeated:
                earlier.append(value)
            else:
                values[folded] = _Repeated((earlier, value))
        return values

    def _occurrences(self, key: str) -> Sequence[object]:
        """Every value given for ``key`` (after folding), in document order."""
        value = self._values.get(key, _ABSENT)
        if type(value) is _Repeated:
            return value
        return () if value is _ABSENT else (value,)

    def _refuse(self, key: str, value: object, go_type: str) -> DeserializationError:
        msg = f"unmarshal {self._type_name}: cannot unmarshal {_kind(value)} into field {key!r}"
        return DeserializationError(f"{msg} of type {go_type}")

    # Scalars. Each getter returns a plain, valid value straight from the dict
    # and hands anything else (a repeated key included) to the general path.
    # null leaves a scalar as it was.

    def _int(self, key: str, value: object, lo: int, hi: int, go_type: str) -> int:
        if type(value) is _Repeated:
            result = 0
            for item in value:
                if item is not None:
                    result = self._int(key, item, lo, hi, go_type)
            return result
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._refuse(key, value, go_type)
        if not lo <= value <= hi or (lo == 0 and isinstance(value, _NegativeZero)):
            raise self._refuse(key, value, go_type)
        return int(value)

    def u8(self, key: str) -> int:
        value = self._values.get(key)
        if value is None:
            return 0
        if type(value) is int and 0 <= value <= U8_MAX:
            return value
        return self._int(key, value, 0, U8_MAX, "uint8")

    def u32(self, key: str) -> int:
        value = self._values.get(key)
        if value is None:
            return 0
        if type(value) is int and 0 <= value <= U32_MAX:
            return value
        return self._int(key, value, 0, U32_MAX, "uint32")

    def u64(self, key: str) -> int:
        value = self._values.get(key)
        if value is None:
            return 0
        if type(value) is int and 0 <= value <= U64_MAX:
            return value
        return self._int(key, value, 0, U64_MAX, "uint64")

    def i64(self, key: str) -> int:
        value = self._values.get(key)
        if value is None:
            return 0
        if type(value) is int and I64_MIN <= value <= I64_MAX:
            return value
        return self._int(key, value, I64_MIN, I64_MAX, "int64")

    def _float(self, key: str, value: object) -> float:
        if type(value) is _Repeated:
            result = 0.0
            for item in value:
                if item is not None:
                    result = self._float(key, item)
            return result
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
        value = self._values.get(key)
        if value is None:
            return 0.0
        if type(value) is float and value - value == 0.0:  # finite
            return value
        return self._float(key, value)

    def _bool(self, key: str, value: object) -> bool:
        if type(value) is _Repeated:
            result = False
            for item in value:
                if item is not None:
                    result = self._bool(key, item)
            return result
        if not isinstance(value, bool):
            raise self._refuse(key, value, "bool")
        return value

    def boolean(self, key: str) -> bool:
        value = self._values.get(key)
        if value is True or value is False:
            return value
        return False if value is None else self._bool(key, value)

    def _str(self, key: str, value: object) -> str:
        if type(value) is _Repeated:
            result = ""
            for item in value:
                if item is not None:
                    result = self._str(key, item)
            return result
        if type(value) is not str:
            raise self._refuse(key, value, "string")
        return _clean(value) if self._surrogates else value

    def string(self, key: str) -> str:
        value = self._values.get(key)
        if value is None:
            return ""
        if type(value) is str and (value.isascii() or not self._surrogates):
            return value
        return self._str(key, value)

    # Pointers, slices, maps and structs.

    def _u64(self, key: str, value: object) -> int:
        if type(value) is int and 0 <= value <= U64_MAX:
            return value
        return self._int(key, value, 0, U64_MAX, "uint64")

    def opt_u64(self, key: str) -> int | None:
        result: int | None = None
        for value in self._occurrences(key):
            result = None if value is None else self._u64(key, value)  # null resets to nil
        return result

    def opt_string(self, key: str) -> str | None:
        result: str | None = None
        for value in self._occurrences(key):
            result = None if value is None else self._str(key, value)  # null resets to nil
        return result

    def u64s(self, key: str) -> tuple[int, ...]:
        result: tuple[int, ...] = ()
        for value in self._occurrences(key):
            if type(value) is list:
                # A null element leaves that element at its zero value.
                result = tuple(0 if v is None else self._u64(key, v) for v in value)
            elif value is None:
                result = ()  # null resets a slice to nil
            else:
                raise self._refuse(key, value, "slice")
        return result

    def strings(self, key: str) -> tuple[str, ...]:
        result: tuple[str, ...] = ()
        for value in self._occurrences(key):
            if type(value) is list:
                surrogates = self._surrogates
                if all(type(v) is str and (v.isascii() or not surrogates) for v in value):
                    result = tuple(value)  # nothing to convert or clean
                else:
                    # A null element leaves that element at its zero value.
                    result = tuple("" if v is None else self._str(key, v) for v in value)
            elif value is None:
                result = ()  # null resets a slice to nil
            else:
                raise self._refuse(key, value, "slice")
        return result

    def str_map(self, key: str) -> Mapping[str, str]:
        result: dict[str, str] = {}
        for value in self._occurrences(key):
            if type(value) is tuple:
                # A later object merges into the map an earlier one built, as in Go.
                for k, v in value:
                    result[_clean(k)] = "" if v is None else self._str(key, v)
            elif value is None:
                result = {}  # null resets the map to nil
            else:
                raise self._refuse(key, value, "map[string]string")
        return result

    def nested(self, key: str, type_name: str) -> FieldReader:
        """Return a reader for a struct field; repeated objects merge, null is ignored."""
        value = self._values.get(key)
        if type(value) is tuple:
            return FieldReader(value, self._type_name, surrogates=self._surrogates)
        pairs: list[tuple[str, object]] = []
        for value in self._occurrences(key):
            if type(value) is tuple:
                pairs.extend(value)
            elif value is not None:
                raise self._refuse(key, value, type_name)
        return FieldReader(pairs, self._type_name, surrogates=self._surrogates)
