"""The compiled payload writers (``_json.c``), where the install built them.

Each is None where it was not built (no C compiler: ``hatch_build.py`` says why); the
records then write their payloads in Python, the same bytes (tests compare them).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["archive", "scene", "topic"]

Writer = Callable[..., bytes | None]

archive: Writer | None
topic: Writer | None
scene: Writer | None
try:
    from memhop.records._json import archive, scene, topic
except ImportError:
    archive = topic = scene = None
