"""Shared fixtures: Hypothesis profiles, temporary paths, thread-leak checks."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# CI draws the same examples every run (a landing must not hang on a lucky draw);
# the dev profile keeps drawing new ones, which is where new failures are found.
settings.register_profile(
    "ci",
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# A long search before a risky change lands: HYPOTHESIS_PROFILE=soak pytest -m "not integration".
settings.register_profile(
    "soak", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture
def meh_path(tmp_path: Path) -> str:
    """A path for a new .meh file that does not exist yet."""
    return str(tmp_path / "memory.meh")


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not leaked, f"Leaked thread(s): {leaked}"
