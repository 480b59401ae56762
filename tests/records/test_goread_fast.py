"""The fast decoder in goread agrees with a straightforward reference decoder.

The reference below is goread's earlier implementation, kept verbatim apart
from its names: simple and slow (a fresh decoder per payload, a parse_int hook
for every integer, key folding and the surrogate cleanup on every call). For
random payloads -- mixed-case and repeated keys, nulls, integers at the edges
of every Go range, ``-0``, floats, surrogate escapes, invalid UTF-8, odd
whitespace, BOMs, truncations -- both must give the same value or both must
raise DeserializationError with the same message.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.errors import DeserializationError
from memhop.records.gojson import I64_MAX, I64_MIN, U8_MAX, U32_MAX, U64_MAX
from memhop.records.goread import FieldReader, read_object, read_string
from memhop.records.goread import _NegativeZero as FastNegativeZero

_T = TypeVar("_T")

# ---------------------------------------------------------------------------
# Reference decoder (the earlier goread, verbatim but for its names)
# ---------------------------------------------------------------------------

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


def ref_read_object(data: bytes, type_name: str) -> RefFieldReader:
    """Parse a payload that must be a JSON object (``null`` reads as all zero)."""
    value = _parse(data, type_name)
    if value is None:
        return RefFieldReader([], type_name)
    if not isinstance(value, _Object):
        msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into {type_name}"
        raise DeserializationError(msg)
    return RefFieldReader(value.pairs, type_name)


def ref_read_string(data: bytes, type_name: str) -> str:
    """Parse a payload that must be a JSON string (``null`` reads as "")."""
    value = _parse(data, type_name)
    if value is None:
        return ""
    if not isinstance(value, str):
        msg = f"unmarshal {type_name}: cannot unmarshal {_kind(value)} into string"
        raise DeserializationError(msg)
    return _clean(value)


class RefFieldReader:
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

    def nested(self, key: str, type_name: str) -> RefFieldReader:
        """Return a reader for a struct field; repeated objects merge, null is ignored."""
        pairs: list[tuple[str, object]] = []
        for value in self._values.get(key, ()):
            if isinstance(value, _Object):
                pairs.extend(value.pairs)
            elif value is not None:
                raise self._refuse(key, value, type_name)
        return RefFieldReader(pairs, self._type_name)


# ---------------------------------------------------------------------------
# Random payloads, built as bytes so they can hold what json.dumps never writes
# ---------------------------------------------------------------------------

# Raw keys fold onto a few field names; U+017F and U+212A fold to "s" and "k".
_RAW_KEYS = ["a", "A", "s", "S", "\u017f", "k", "K", "\u212a", "id", "ID", "iD", "x_y", "X_Y", "zz"]
_PROBE_KEYS = ["a", "s", "k", "id", "x_y", "missing"]

_INT_LITERALS = [
    "0", "-0", "1", "-1", "7", "255", "256", "4294967295", "4294967296",
    str(I64_MAX), str(I64_MAX + 1), str(I64_MIN), str(I64_MIN - 1),
    str(U64_MAX), str(U64_MAX + 1), "1" + "0" * 30, "-" + "9" * 25,
]  # fmt: skip
_FLOAT_LITERALS = [
    "0.0", "-0.0", "1.5", "-0.5", "-0.25", "1e3", "1E-3", "-0e0", "0e5", "2.5e-1",
    "1e308", "1e309", "-1e309", "4.9e-324", "123456789012345678901234567890.5",
]  # fmt: skip
_OTHER_LITERALS = ["true", "false", "null", "null", "NaN", "Infinity", "-Infinity"]

# String pieces: plain, non-ASCII, escapes (lone and paired surrogates in both
# cases), raw invalid UTF-8 (a stray byte, a truncated sequence, an encoded
# surrogate) and text that merely looks like the cheap checks' targets.
_STRING_PIECES: list[bytes] = [
    b"x", b"hello", b" ", b":", b"-0", b"\\\\ud800", b"\xc3\xa9", b"\xe2\x82\xac",
    b"\xf0\x9f\x98\x80", b"\\u00e9", b"\\u003c", b"\\ufffd", b"\\ud800", b"\\uDC00",
    b"\\uD83D\\uDE00", b"\\ud83d", b"\\udfff", b'\\"', b"\\\\", b"\\n", b"\xff", b"\xc3",
    b"\xed\xa0\x80", b"\xe2\x82", b"\xc2\x80", b"\xe2\x80\xa8",
]  # fmt: skip


def _string(pieces: list[bytes]) -> bytes:
    return b'"' + b"".join(pieces) + b'"'


_strings = st.lists(st.sampled_from(_STRING_PIECES), max_size=5).map(_string)
_scalars = st.one_of(
    st.sampled_from(_INT_LITERALS).map(str.encode),
    st.sampled_from(_FLOAT_LITERALS).map(str.encode),
    st.sampled_from(_OTHER_LITERALS).map(str.encode),
    st.integers(min_value=-(2**70), max_value=2**70).map(lambda n: str(n).encode()),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: repr(x).encode()),
    _strings,
)
_keys = st.one_of(st.sampled_from(_RAW_KEYS).map(lambda k: json.dumps(k).encode()), _strings)
_sep = st.sampled_from([b"", b"", b"", b" ", b"\n\t "])


def _array(items: list[bytes]) -> bytes:
    return b"[" + b",".join(items) + b"]"


def _object(pairs: list[tuple[bytes, bytes, bytes]]) -> bytes:
    return b"{" + b",".join(k + sep + b":" + sep + v for k, v, sep in pairs) + b"}"


def _extend(children: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.lists(children, max_size=4).map(_array),
        st.lists(st.tuples(_keys, children, _sep), max_size=8).map(_object),
    )


_values = st.recursive(_scalars, _extend, max_leaves=16)
# Field values one level deep: enough for nested structs, slices and maps.
_fields = st.one_of(
    _scalars,
    st.lists(_scalars, max_size=4).map(_array),
    st.lists(st.tuples(_keys, _scalars, _sep), max_size=5).map(_object),
)
_objects = st.lists(st.tuples(_keys, _fields, _sep), max_size=10).map(_object)


@st.composite
def _payloads(draw: st.DrawFn, body: st.SearchStrategy[bytes]) -> bytes:
    data = draw(body)
    mangle = draw(st.sampled_from(["none"] * 8 + ["pad", "bom", "trail", "cut", "byte"]))
    if mangle == "pad":
        data = draw(_sep) + data + draw(_sep)
    elif mangle == "bom":
        data = b"\xef\xbb\xbf" + data
    elif mangle == "trail":
        data += draw(st.sampled_from([b"x", b",", b" 1", b"{}", b"\x00"]))
    elif mangle == "cut":
        data = data[: draw(st.integers(min_value=0, max_value=len(data)))]
    elif mangle == "byte":
        at = draw(st.integers(min_value=0, max_value=len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=2)) + data[at:]
    return data


# ---------------------------------------------------------------------------
# Observing every getter of both readers
# ---------------------------------------------------------------------------

_SCALAR_GETTERS = [
    "u8", "u32", "u64", "i64", "f64", "boolean", "string",
    "opt_u64", "opt_string", "u64s", "strings", "str_map",
]  # fmt: skip


def _shape(value: object) -> object:
    """A comparable picture of a value: type names kept, -0.0 told from 0.0."""
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), repr(value))
    if isinstance(value, tuple):
        return ("tuple", [_shape(v) for v in value])
    if isinstance(value, Mapping):
        return ("map", [(_shape(k), _shape(v)) for k, v in value.items()])
    return (type(value).__name__, repr(value))


def _outcome(call: Callable[[], object]) -> object:
    try:
        return ("ok", _shape(call()))
    except DeserializationError as exc:
        return ("error", str(exc))


def _observe_reader(reader: Any, depth: int) -> list[object]:
    seen: list[object] = []
    for key in _PROBE_KEYS:
        for name in _SCALAR_GETTERS:
            seen.append((key, name, _outcome(partial(getattr(reader, name), key))))
        try:
            inner = reader.nested(key, "Inner")
        except DeserializationError as exc:
            seen.append((key, "nested", ("error", str(exc))))
        else:
            seen.append((key, "nested", _observe_reader(inner, depth + 1) if depth < 1 else "ok"))
    return seen


def _observe(read: Callable[[bytes, str], Any], data: bytes) -> object:
    try:
        reader = read(data, "Payload")
    except DeserializationError as exc:
        return ("error", str(exc))
    return _observe_reader(reader, 0)


def _assert_agree(data: bytes) -> None:
    assert _observe(read_object, data) == _observe(ref_read_object, data)
    assert _outcome(lambda: read_string(data, "Name")) == _outcome(
        lambda: ref_read_string(data, "Name")
    )


@settings(max_examples=200)
@given(_payloads(_objects))
def test_objects_decode_as_the_reference_does(data: bytes) -> None:
    _assert_agree(data)


@settings(max_examples=100)
@given(_payloads(_values))
def test_any_value_decodes_as_the_reference_does(data: bytes) -> None:
    _assert_agree(data)


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_as_the_reference_does(data: bytes) -> None:
    _assert_agree(data)


@given(st.lists(st.tuples(st.sampled_from(_RAW_KEYS), _fields), max_size=10))
def test_reader_built_from_pairs_agrees(pairs: list[tuple[str, bytes]]) -> None:
    # FieldReader is public: one built straight from decoded pairs, with the
    # default (no promise about surrogates), must read as the reference's does.
    body = b"{" + b",".join(json.dumps(k).encode() + b":" + v for k, v in pairs) + b"}"
    try:
        decoded = _parse(body, "Payload")
    except DeserializationError:
        return
    assert isinstance(decoded, _Object)
    fast = FieldReader([(k, _as_fast(v)) for k, v in decoded.pairs], "Payload")
    assert _observe_reader(fast, 0) == _observe_reader(RefFieldReader(decoded.pairs, "Payload"), 0)


def _as_fast(value: object) -> object:
    """Turn a reference-decoded value into the fast decoder's representation."""
    if isinstance(value, _Object):
        return tuple((k, _as_fast(v)) for k, v in value.pairs)
    if isinstance(value, list):
        return [_as_fast(v) for v in value]
    if isinstance(value, _NegativeZero):
        return FastNegativeZero(0)
    return value


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":-0}',
        b'{"a":-0.5,"s":-0}',
        b'{"a":"-0","id":-0}',
        b'{"a":1,"A":null,"\\u0061":2}',
        b'{"k":1,"\xe2\x84\xaa":2,"K":3}',
        b'{"s":"x","\xc5\xbf":"\xff"}',
        b'{"a":"\\ud83d\\ude00\\ud800"}',
        b'{"a":"\\uDC00"}',
        b'{"a":"\xc3\xa9\\uDC00"}',
        b'{"a":"\xc3\xa9\\ud800"}',
        b'{"a":"\xc3\xa9","s":["\\uD800",null],"k":{"\\udc00":"\\uDFFF"},"id":{"a":"\\uD800"}}',
        b'{"a":"\xed\xa0\x80"}',
        b'{"a":{"b":1},"A":{"c":2},"a":null}',
        b'{"a":["x",null,"\\udc00"],"a":null}',
        b'{"a":1e309}',
        b'{"a":NaN}',
        b'{"a":-Infinity}',
        b' {"a":1} ',
        b'\xef\xbb\xbf{"a":1}',
        b'{"a":1}x',
        b'{"a":1',
        b"",
        b"null",
        b'"\\ud800x\xff"',
        b"[" * 5000,
    ],
)
def test_known_corners_decode_as_the_reference_does(data: bytes) -> None:
    _assert_agree(data)
