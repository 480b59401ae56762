"""The command line's tests run on the inspector's demo file (same fixtures)."""

from tests.inspect.conftest import demo, demo_master

__all__ = ["demo", "demo_master"]
