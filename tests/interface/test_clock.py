"""The host's clock (``memhop.open(..., clock=...)``): every time memhop reads comes from it."""

from __future__ import annotations

import os
from typing import Any

import pytest

import memhop

from .conftest import TS, open_new

DAY_MS = 86_400_000


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: int = TS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def test_the_profile_stamp_and_retention_follow_the_hosts_clock(meh_path: str) -> None:
    clock = Clock()
    defaults = memhop.Defaults(sweep_unfolded=True)  # upstream's sweep: the window alone decides
    with open_new(meh_path, clock=clock, defaults=defaults) as db:
        me = db.primary()
        assert me.get_l0().updated_at_ms == TS  # the seed's stamp is the clock's, not the wall's
        me.search(new_scene=True)
        turn = me.update(input="we planted tomatoes", output="they need sun", created_at=TS)
        clock.now = TS + 6 * DAY_MS  # inside the seven-day window
        assert me.dream().l4_records_pruned == 0
        assert len(me.search_l4(topic_id=turn.id)) == 2  # control: the lines are there
        clock.now = TS + 8 * DAY_MS  # past it, by the clock alone: no real time passed
        assert me.dream().l4_records_pruned == 2
        assert me.search_l4(topic_id=turn.id) == []


@pytest.mark.parametrize(
    ("clock", "fragment"),
    [
        (42, "clock must be a callable"),
        (lambda: 1_700_000_000.5, "not an integer of Unix milliseconds"),
        (lambda: True, "not an integer of Unix milliseconds"),
        (lambda: 1_700_000_000, "band of seconds"),
        (lambda: 1_700_000_000_000_000, "microseconds"),
        (lambda: -1, "not Unix milliseconds"),
    ],
)
def test_a_clock_that_is_not_milliseconds_is_refused_before_the_file(
    meh_path: str, clock: Any, fragment: str
) -> None:
    with pytest.raises(memhop.ConfigError, match=fragment):
        open_new(meh_path, clock=clock)
    assert not os.path.exists(meh_path)
    with open_new(meh_path, clock=Clock()) as db:  # control: a clock in milliseconds opens
        assert db.primary().get_l0().updated_at_ms == TS


def test_a_clock_that_goes_bad_later_fails_the_call_that_read_it(meh_path: str) -> None:
    clock = Clock()
    with open_new(meh_path, clock=clock) as db:
        me = db.primary()
        me.search(new_scene=True)
        clock.now = 1_700_000_000  # seconds now
        with pytest.raises(memhop.ConfigError, match="band of seconds"):
            me.dream()
        clock.now = TS + 1
        assert me.dream().stages  # control: the same call runs once the clock is right again
