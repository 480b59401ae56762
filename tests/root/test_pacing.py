"""A domain's build makes way for calls in flight, but keeps a share of the wall time."""

from __future__ import annotations

import pytest

from memhop.root.pacing import LEAST_WAY_S, SharedPace

LONGEST = 0.05


class Clocks:
    """A build's CPU and the wall, both driven by the test. ``busy`` says whether calls are
    in flight: a make_way then spends all the wall it is given (each such wait is the host's
    time), else returns at once."""

    def __init__(self, busy: bool) -> None:
        self.cpu = 0.0
        self.wall = 0.0
        self.busy = busy
        self.asked: list[float] = []

    def make_way(self, longest: float) -> None:
        self.asked.append(longest)
        if self.busy:
            self.wall += longest

    def work(self, seconds: float, lost: float = 0.0) -> None:
        """The build computes ``seconds``; the host takes the interpreter ``lost`` meanwhile."""
        self.cpu += seconds
        self.wall += seconds + lost


def _pace(clocks: Clocks, share: float = 1 / 2) -> SharedPace:
    return SharedPace(
        clocks.make_way, LONGEST, share, wall=lambda: clocks.wall, cpu=lambda: clocks.cpu
    )


@pytest.mark.parametrize("share", [1 / 2, 1 / 3])
def test_beside_calls_without_pause_the_build_keeps_its_share(share: float) -> None:
    clocks = Clocks(busy=True)
    pace = _pace(clocks, share)
    for _ in range(2000):
        clocks.work(0.0005)
        pace()
    # The first 50 ms go to the calls (the lead an open starts with); then the share.
    assert clocks.cpu / (clocks.wall - LONGEST) == pytest.approx(share, rel=0.02)
    assert max(clocks.asked) <= LONGEST
    assert min(clocks.asked) >= LEAST_WAY_S  # no hand-over too short to be worth one


def test_a_host_that_takes_the_interpreter_itself_is_made_way_for_no_more() -> None:
    clocks = Clocks(busy=True)
    pace = _pace(clocks)
    clocks.work(0.001)
    pace()  # the lead an open starts with: the first calls go first
    assert clocks.asked == [LONGEST]
    for _ in range(100):  # half the build's time lost to the host's own switches
        clocks.work(0.001, lost=0.0011)
        pace()
    assert clocks.asked == [LONGEST]  # behind its share: it makes way no further
    for _ in range(100):  # control: once the host lets it work, it makes way again
        clocks.work(0.001)
        pace()
    assert len(clocks.asked) > 1


def test_a_build_alone_is_never_slowed_and_saves_no_more_than_the_longest_wait() -> None:
    clocks = Clocks(busy=False)
    pace = _pace(clocks)
    for _ in range(100):
        clocks.work(0.01)
        pace()
    assert clocks.wall == pytest.approx(1.0)  # nothing in flight: no wait
    assert clocks.asked[-1] == pytest.approx(LONGEST)  # saved, capped at the longest wait
    clocks.busy = True  # calls come: they go first for as long as it saved, once
    clocks.work(0.001)
    pace()
    assert clocks.wall == pytest.approx(1.051)
    assert len(clocks.asked) == 101
    clocks.work(0.001)
    pace()  # that wait is counted now: it used the lead up, no hand-over
    assert len(clocks.asked) == 101
    for _ in range(3):  # control: the lead is made up again at the share's rate
        clocks.work(0.001)
        pace()
    assert LEAST_WAY_S <= clocks.asked[-1] < 0.004  # a short way, not the longest
    assert len(clocks.asked) == 102


def test_the_share_is_checked() -> None:
    clocks = Clocks(busy=True)
    for share in (0.0, 1.5):
        with pytest.raises(ValueError, match="share must be in"):
            _pace(clocks, share=share)
    whole = _pace(clocks, share=1.0)  # control: all of it, after the lead an open starts with
    for _ in range(10):
        clocks.work(0.01)
        whole()
    assert clocks.asked == [LONGEST]
