"""A domain's build makes way for calls in flight, but keeps a share of the interpreter."""

from __future__ import annotations

import pytest

from memhop.root.pacing import SharedPace


class Clocks:
    """A build's CPU and the wall, both driven by the test; ``busy`` says whether calls are
    in flight (a make_way that waits spends the wall it is given while they are)."""

    def __init__(self, busy: bool) -> None:
        self.cpu = 0.0
        self.wall = 0.0
        self.busy = busy
        self.asked: list[float] = []

    def make_way(self, longest: float) -> None:
        self.asked.append(longest)
        if self.busy:
            self.wall += longest

    def work(self, seconds: float) -> None:
        self.cpu += seconds
        self.wall += seconds


def _pace(clocks: Clocks, longest: float = 0.05, share: float = 1 / 3) -> SharedPace:
    return SharedPace(
        clocks.make_way, longest, share, wall=lambda: clocks.wall, cpu=lambda: clocks.cpu
    )


def test_beside_calls_without_pause_the_build_keeps_its_share() -> None:
    clocks = Clocks(busy=True)
    pace = _pace(clocks)
    for _ in range(1000):
        clocks.work(0.001)
        pace()
    # The first 50 ms saved go to the calls first; then two thirds of the wall.
    assert clocks.cpu == pytest.approx(1.0)
    assert clocks.wall == pytest.approx(1.0 + 0.05 + 2 * 1.0, rel=0.01)
    assert max(clocks.asked) <= 0.05 + 1e-9


def test_a_build_alone_saves_its_credit_up_to_the_longest_wait() -> None:
    clocks = Clocks(busy=False)
    pace = _pace(clocks)
    for _ in range(100):
        clocks.work(0.01)
        pace()
    assert clocks.wall == pytest.approx(1.0)  # nothing in flight: never slowed
    assert clocks.asked[-1] == pytest.approx(0.05)  # saved, capped at the longest wait
    clocks.busy = True  # calls come: they go first for as long as it saved
    pace()
    assert clocks.wall == pytest.approx(1.05)
    clocks.work(0.003)
    pace()  # then for twice what the build did since
    assert clocks.asked[-1] == pytest.approx(0.006)


def test_the_share_is_checked() -> None:
    clocks = Clocks(busy=True)
    for share in (0.0, 1.5):
        with pytest.raises(ValueError, match="share must be in"):
            _pace(clocks, share=share)
    whole = _pace(clocks, share=1.0)  # control: all of it, after the saved wait
    clocks.work(0.01)
    whole()
    clocks.work(0.01)
    whole()
    assert clocks.asked == [0.05, 0.0]
