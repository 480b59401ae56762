"""A keyed store of seq-ordered entries per topic: the base of the L4 and plan mirrors.

Responsibility: the bookkeeping both mirrors share (an entry per id, an id per
(topic, seq)) so that each mirror adds only its own reads.

Contract:
- Keyed by the entry's id (the address its record is stored at); one
  (topic, seq) holds at most one entry, and a later ``_put`` replaces whatever
  held its id or its (topic, seq).
- Per-topic answers cost time proportional to that topic's entries.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterable
from typing import Generic, Protocol, Self, TypeVar

__all__ = ["Keyed", "TopicSeqStore"]


class Keyed(Protocol):
    """An entry stored at ``id_hash`` and placed at (``topic_id``, ``seq``)."""

    @property
    def id_hash(self) -> int: ...

    @property
    def topic_id(self) -> int: ...

    @property
    def seq(self) -> int: ...


E = TypeVar("E", bound=Keyed)


_seq = operator.attrgetter("seq")


def _seq_ordered(entries: Iterable[E]) -> dict[int, list[int]] | None:
    """Topic -> the ids of its entries in seq order; None when a topic holds a seq twice."""
    grouped: defaultdict[int, list[E]] = defaultdict(list)
    for entry in entries:
        grouped[entry.topic_id].append(entry)
    topics: dict[int, list[int]] = {}
    for topic_id, held in grouped.items():
        if len(held) > 1:
            held.sort(key=_seq)
            if len(set(map(_seq, held))) < len(held):
                return None
        topics[topic_id] = [entry.id_hash for entry in held]
    return topics


class TopicSeqStore(Generic[E]):
    """Entries grouped by topic; subclasses expose their own typed ``put``."""

    def __init__(self) -> None:
        self._by_id: dict[int, E] = {}
        self._topics: dict[int, list[int]] = {}  # topic -> its ids in seq order

    def _id_at(self, topic_id: int, seq: int) -> int | None:
        by_id = self._by_id
        for id_hash in self._topics.get(topic_id, ()):
            if by_id[id_hash].seq == seq:
                return id_hash
        return None

    @classmethod
    def _built(cls, entries: Iterable[E]) -> Self:
        """A store holding ``entries``, the same as storing each in turn by ``_put``."""
        store = cls()
        listed = list(entries)
        by_id = {entry.id_hash: entry for entry in listed}
        topics = _seq_ordered(listed) if len(by_id) == len(listed) else None
        if topics is None:
            for entry in listed:  # something replaces something: the general path, in order
                store._put(entry)
            return store
        # Nothing to replace, and a fresh store's journal is not watching yet, so only
        # the subclass's hook is owed.
        store._by_id, store._topics = by_id, topics
        stored = store._stored
        for entry in listed:
            stored(entry)
        return store

    def _put(self, entry: E) -> None:
        """Store an entry; it replaces whatever held its id or its (topic, seq)."""
        self.remove(entry.id_hash)
        self._touched(entry.topic_id)
        by_id = self._by_id
        ids = self._topics.get(entry.topic_id)
        if ids is None:
            ids = self._topics[entry.topic_id] = []
        at = len(ids)
        for i, other in enumerate(ids):
            seq = by_id[other].seq
            if seq == entry.seq:
                # Only a payload naming a foreign id gets here: keep one entry per address.
                del ids[i]
                self._dropped(by_id.pop(other))
                at = i
                break
            if seq > entry.seq:
                at = i
                break
        ids.insert(at, entry.id_hash)
        by_id[entry.id_hash] = entry
        self._stored(entry)

    def _touched(self, topic_id: int) -> None:
        """Called with the topic of every entry stored or forgotten (a hook for subclasses)."""

    def _stored(self, entry: E) -> None:
        """Called with every entry stored (a hook for subclasses)."""

    def _dropped(self, entry: E) -> None:
        """Called with every entry forgotten or replaced (a hook for subclasses)."""

    def remove(self, id_hash: int) -> bool:
        """Forget one entry; False when the store did not hold it."""
        entry = self._by_id.pop(id_hash, None)
        if entry is None:
            return False
        self._touched(entry.topic_id)
        self._dropped(entry)
        ids = self._topics[entry.topic_id]
        ids.remove(id_hash)
        if not ids:
            del self._topics[entry.topic_id]
        return True

    def remove_many(self, ids: Iterable[int]) -> int:
        """Forget several entries (after a tombstone batch); return how many the store held."""
        return sum(1 for id_hash in ids if self.remove(id_hash))

    def remove_topic(self, topic_id: int) -> list[int]:
        """Forget every entry of a topic; return their ids ascending."""
        ids = sorted(self._topics.pop(topic_id, ()))
        if ids:
            self._touched(topic_id)
        for id_hash in ids:
            self._dropped(self._by_id.pop(id_hash))
        return ids

    def __len__(self) -> int:
        return len(self._by_id)

    def topics(self) -> list[int]:
        """Topics holding at least one entry, ascending."""
        return sorted(self._topics)

    def highest_seq(self, topic_id: int) -> int:
        """The highest seq the topic holds; 0 when it holds none."""
        ids = self._topics.get(topic_id)
        return self._by_id[ids[-1]].seq if ids else 0

    def ids_in(self, topic_id: int) -> list[int]:
        """The ids of the topic's entries, in seq order."""
        return list(self._topics.get(topic_id, ()))

    def _entries_of(self, topic_id: int) -> list[E]:
        """The topic's entries in seq order."""
        by_id = self._by_id
        return [by_id[i] for i in self._topics.get(topic_id, ())]

    def _same_entries(self, other: TopicSeqStore[E]) -> bool:
        """True when both stores hold the same entries at the same places."""
        return self._by_id == other._by_id and self._topics == other._topics

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable
