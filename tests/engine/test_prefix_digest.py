"""Engine.prefix_digest(s): the xxh3-128 of the record area up to an end, as the file holds it."""

from __future__ import annotations

from pathlib import Path

import pytest
import xxhash

from memhop.engine import DATA_START, RECORD_HEADER_SIZE, RecordEntry, create_engine, open_engine
from memhop.engine import seed as seed_module
from memhop.errors import InvalidQueryError


def test_prefix_digests_are_the_file_bytes_hashed_and_stay_as_the_log_grows(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "d.meh")
    eng = create_engine(path)
    try:
        ends = []
        for i in range(1, 6):
            eng.write(1, 4, i, b'{"n":%d}' % i)
            ends.append(eng.record_end)
        raw = Path(path).read_bytes()
        want = [xxhash.xxh3_128_digest(raw[DATA_START:end]) for end in ends]
        assert eng.prefix_digests(ends) == want  # one pass, a digest at each end
        assert [eng.prefix_digest(end) for end in ends] == want
        assert eng.prefix_digests([]) == []
        eng.write(1, 4, 99, b'{"n":99}')
        assert eng.prefix_digests(ends[:2]) == want[:2]  # appends leave a past prefix alone
        assert eng.prefix_digest(eng.record_end) != want[-1]  # control: the new end differs
    finally:
        eng.close()


@pytest.mark.parametrize("bad", ["before the records", "past the records", "descending"])
def test_prefix_ends_outside_the_records_or_out_of_order_are_refused(
    tmp_path: Path, bad: str
) -> None:
    eng = create_engine(str(tmp_path / "d.meh"))
    try:
        eng.write(1, 4, 1, b'{"n":1}')
        first = eng.record_end
        eng.write(1, 4, 2, b'{"n":2}')
        end = eng.record_end
        assert len(eng.prefix_digests([DATA_START, first, end])) == 3  # control: these are fine
        ends, says = {
            "before the records": ([DATA_START - 1], "outside the record area"),
            "past the records": ([first, end + 1], "outside the record area"),
            "descending": ([end, first], "not ascending"),
        }[bad]
        with pytest.raises(InvalidQueryError, match=says):
            eng.prefix_digests(ends)
    finally:
        eng.close()


def test_a_digest_is_hashed_once_and_the_seed_checked_at_open_is_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remembered digests are the file's bytes hashed; asking again hashes nothing."""
    path = str(tmp_path / "d.meh")
    eng = create_engine(path)
    eng.write_batch([RecordEntry(1, 4, i, b"y" * 300) for i in range(1, 5000)])
    eng.close()  # a log past 1 MiB: the close keeps a seed
    eng = open_engine(path)
    eng.write(1, 4, 9999, b"after the close")  # cuts the snapshot
    eng.close_without_checkpoint()  # a kill
    hashed: list[list[int]] = []
    real = seed_module.prefix_digests

    def counting(view: bytes, ends: list[int], last: int) -> list[bytes]:
        hashed.append(list(ends))
        return real(view, ends, last)

    eng = open_engine(path)  # it checks the seed's digest: the end it covers is known now
    monkeypatch.setattr(seed_module, "prefix_digests", counting)
    try:
        assert eng.index_source == "seed"
        raw = Path(path).read_bytes()
        seed_end = eng.record_end - RECORD_HEADER_SIZE - len(b"after the close")
        want = xxhash.xxh3_128_digest(raw[DATA_START:seed_end])
        assert eng.prefix_digest(seed_end) == want
        assert hashed == []  # the open checked it against the seed: not hashed again
        end = eng.record_end
        assert eng.prefix_digests([seed_end, end]) == [
            want,
            xxhash.xxh3_128_digest(raw[DATA_START:end]),
        ]
        assert hashed == [[seed_end, end]]  # control: an end not known is hashed, once
        assert eng.prefix_digest(end) == xxhash.xxh3_128_digest(raw[DATA_START:end])
        assert hashed == [[seed_end, end]]
    finally:
        eng.close_without_checkpoint()
