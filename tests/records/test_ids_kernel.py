"""The compiled pair derivation (``memhop/_ids.c``) against the Python one
(``ids._py_pair_id``): xxHash64 of ``f"{prefix}{a}:{b}"``, the same id for every argument.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the kernel's absence a failure.
"""

from __future__ import annotations

import enum
import os

import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop import ids

if ids._pair_id is ids._py_pair_id and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the compiled id kernel was not built here", allow_module_level=True)

from memhop._ids import pair_id  # after the skip: absent without a compiler

U64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 9, 10, 2**63, 2**64 - 1]))
# Prefixes from empty to past the 64 bytes the kernel writes in place, so every length of
# the hashed string (each tail of the hash's stripes) is reached, ASCII or not.
PREFIXES = st.one_of(st.sampled_from(["content:", "turn:", "plan:", "l1edge:"]), st.text())


class Kind(enum.IntEnum):
    EVENT = 2


@settings(max_examples=500)
@given(PREFIXES, U64, U64)
def test_a_pair_of_u64s_hashes_as_the_python_reference(prefix: str, a: int, b: int) -> None:
    assert pair_id(prefix, a, b) == ids._py_pair_id(prefix, a, b)


@given(
    PREFIXES,
    st.one_of(st.integers(), st.booleans(), st.just(Kind.EVENT)),
    st.one_of(st.integers(), st.booleans(), st.just(Kind.EVENT)),
)
def test_any_other_value_is_formatted_as_the_f_string_formats_it(
    prefix: str, a: int, b: int
) -> None:
    assert pair_id(prefix, a, b) == ids._py_pair_id(prefix, a, b)


def test_the_hash_is_xxhash64_of_the_utf8_text() -> None:
    # Pinned by the library xxHash ships (a control that the reference itself is the spec's).
    assert pair_id("content:", 1, 1) == xxhash.xxh64_intdigest(b"content:1:1")
    assert ids.format_id(pair_id("turn:", 1, 1)) == "66b253e8270de962"  # storage.md §5
    wide = "é:18446744073709551615:0".encode()
    assert pair_id("é:", 2**64 - 1, 0) == xxhash.xxh64_intdigest(wide)


def test_bad_calls_are_refused_as_a_python_function_would_refuse_them() -> None:
    with pytest.raises(TypeError, match="3 arguments"):
        pair_id("content:", 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="prefix must be a str"):
        pair_id(b"content:", 1, 2)  # type: ignore[arg-type]
    assert pair_id("content:", 1, 2) == ids.content_id(1, 2)  # control: the good call answers
