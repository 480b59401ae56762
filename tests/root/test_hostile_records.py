"""Records a hostile file can hold: each is refused where it is read, never at the open."""

from __future__ import annotations

import pytest

import memhop
from memhop.engine import open_engine
from memhop.ids import profile_id
from memhop.records import RecordType


def _plant_profile(path: str, payload: bytes) -> None:
    """Overwrite the primary's profile record with ``payload`` (a valid frame, hostile JSON)."""
    engine = open_engine(path)
    try:
        engine.write(0, RecordType.PROFILE, profile_id(), payload)
    finally:
        engine.close()


@pytest.mark.parametrize(
    "payload",
    [
        b'{"name":' + b"[" * 200_000 + b"]" * 200_000 + b"}",
        b'{"name":"x","preferences":' + b'{"a":' * 50_000 + b'""' + b"}" * 50_001,
        b"\xff\xfe not json",
    ],
    ids=["nested-arrays", "nested-objects", "not-json"],
)
def test_a_hostile_profile_does_not_block_the_open(meh_path: str, payload: bytes) -> None:
    """The file opens; get_l0 names the record; turns still work; stats count the record."""
    seed = memhop.ProfileInput(name="seeded")
    with memhop.open(meh_path, memhop.LocalModel(), profile=seed) as db:
        assert db.primary().get_l0().name == "seeded"  # the control: a sound profile reads
    _plant_profile(meh_path, payload)
    with memhop.open(meh_path, memhop.LocalModel(), profile=seed) as db:
        me = db.primary()
        with pytest.raises(memhop.MemHopError, match=f"record {profile_id():016x}") as info:
            me.get_l0()
        assert isinstance(info.value, memhop.DeserializationError | memhop.CorruptionError)
        me.search()
        me.update(input="still here", output="yes", created_at=1_700_000_000_000)
        assert db.stats().damaged_records == 1
        assert db.agents()[0].name == ""  # the listing does not fail on it either
