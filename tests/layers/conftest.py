"""Fixtures for the layer tests: a fresh engine on a temporary file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memhop.engine import Engine, create_engine


@pytest.fixture
def engine(meh_path: str) -> Iterator[Engine]:
    """A fresh engine, closed (with a checkpoint) after the test unless the test closed it."""
    eng = create_engine(meh_path)
    yield eng
    if not eng.closed:
        eng.close()
