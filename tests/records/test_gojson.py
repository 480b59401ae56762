"""Go encoding/json output: float layout, string escapes, range refusals."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.errors import SerializationError
from memhop.records.gojson import ObjectWriter, format_float, quote_string


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (0.0, "0"),
        (-0.0, "-0"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (123456789.0, "123456789"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (-1.5e21, "-1.5e+21"),
        (1e100, "1e+100"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.25e-9, "1.25e-9"),
        (1e-10, "1e-10"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.30000000000000004, "0.30000000000000004"),
        (1 / 3, "0.3333333333333333"),
        (100.0, "100"),
        (0.00012, "0.00012"),
    ],
)
def test_floats_are_written_as_go_writes_them(value: float, expected: str) -> None:
    assert format_float(value) == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_text_round_trips_and_is_valid_json(value: float) -> None:
    text = format_float(value)
    assert float(text) == value
    assert math.copysign(1.0, float(text)) == math.copysign(1.0, value)
    assert not text.endswith(".0")
    assert "e-0" not in text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<a&b>", '"\\u003ca\\u0026b\\u003e"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ('q"b\\s', '"q\\"b\\\\s"'),
        ("\n\r\t", '"\\n\\r\\t"'),
        # Go 1.22 and later write \b and \f short; older Go wrote \u0008 and \u000c.
        ("\b\f", '"\\b\\f"'),
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ("\x7f", '"\x7f"'),
        ("héllo 世界 😀", '"héllo 世界 😀"'),
        ("\ufffd", '"\ufffd"'),
        ("a\ud800b", '"a\\ufffdb"'),
        ("\udcff\udc80", '"\\ufffd\\ufffd"'),
        ("/", '"/"'),
    ],
)
def test_strings_are_escaped_as_go_escapes_them(value: str, expected: str) -> None:
    assert quote_string(value) == expected


def test_map_keys_are_sorted_and_escaped() -> None:
    w = ObjectWriter("T")
    w.str_map("m", {"b": "2", "<": "x", "a": "1", "é": "3"})
    assert w.to_bytes() == '{"m":{"\\u003c":"x","a":"1","b":"2","é":"3"}}'.encode()


def test_omitempty_drops_zero_values_only() -> None:
    w = ObjectWriter("T")
    w.u64("a", 0, omitempty=True)
    w.string("b", "", omitempty=True)
    w.boolean("c", False, omitempty=True)
    w.opt_u64("d", None)
    w.opt_string("e", None)
    w.opt_u64("f", 0)
    w.opt_string("g", "")
    w.u64("h", 0)
    assert w.to_bytes() == b'{"f":0,"g":"","h":0}'


@pytest.mark.parametrize(
    ("write", "fragment"),
    [
        (lambda w: w.u64("id", -1), "out of range"),
        (lambda w: w.u64("id", 2**64), "out of range"),
        (lambda w: w.u8("depth", 256), "out of range"),
        (lambda w: w.u32("seq", 2**32), "out of range"),
        (lambda w: w.i64("at", 2**63), "out of range"),
        (lambda w: w.i64("at", True), "not an integer"),
        (lambda w: w.u64s("ids", [1, -2]), "out of range"),
        (lambda w: w.f64("x", math.nan), "unsupported value"),
        (lambda w: w.f64("x", math.inf), "unsupported value"),
        (lambda w: w.f64("x", 10**400), "unsupported value"),
        (lambda w: w.f64("x", "0.5"), "not a number"),
        (lambda w: w.string("name", 5), "not a string"),
        (lambda w: w.strings("keywords", ["a", None]), "not a string"),
        (lambda w: w.str_map("preferences", {"a": 1}), "not a string"),
    ],
)
def test_values_go_cannot_hold_are_refused(
    write: Callable[[ObjectWriter], None], fragment: str
) -> None:
    w = ObjectWriter("TopicSlot")
    with pytest.raises(SerializationError) as info:
        write(w)
    assert "marshal TopicSlot" in str(info.value)
    assert fragment in str(info.value)
    assert info.value.code == 5006


def test_range_edges_are_accepted() -> None:
    w = ObjectWriter("T")
    w.u64("a", 2**64 - 1)
    w.i64("b", -(2**63))
    w.u8("c", 255)
    w.u32("d", 2**32 - 1)
    expected = b'{"a":18446744073709551615,"b":-9223372036854775808,"c":255,"d":4294967295}'
    assert w.to_bytes() == expected
