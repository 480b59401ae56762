"""Which topics changed since a reader last looked: how a lazy mirror stays current.

The topic and content mirrors note every topic whose row or slots they
change; a mirror built from them on demand (the recall index) drains the
notes on its next read and redoes only those topics. Nothing is noted until
a reader starts watching, so a domain that never recalls pays one attribute
check per write.
"""

from __future__ import annotations

__all__ = ["Journal"]


class Journal:
    """Ids (of topics, or of scenes) changed since the last ``drain``, kept only while
    ``watching``."""

    __slots__ = ("_changed", "_owner", "_owners", "watching")

    def __init__(self) -> None:
        self._changed: set[int] = set()
        self.watching = False
        self._owners: set[int] | None = None
        self._owner = 0

    def report_to(self, owners: set[int], owner: int) -> None:
        """Add ``owner`` to ``owners`` at each note from now on: a reader of many journals
        drains only those that hold notes."""
        self._owners, self._owner = owners, owner

    def note(self, id_hash: int) -> None:
        if self.watching:
            self._changed.add(id_hash)
            if self._owners is not None:
                self._owners.add(self._owner)

    def drain(self) -> set[int]:
        """The ids noted since the last drain (and start watching)."""
        self.watching = True
        changed, self._changed = self._changed, set()
        return changed
