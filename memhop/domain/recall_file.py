"""The recall file beside a ``.meh``: each domain's recall state, saved at close.

A domain's first recall after an open takes its state from here instead of
cutting every line of the domain into terms again (seconds at 10^5 turns),
when the file still vouches for it; what the log gained since is redone.

The file holds terms cut from the domain's text (case-folded, stemmed words),
so it must never outlive a delete: the engine calls ``RecallFile.deleted``
ahead of every tombstone it writes (``Engine.watch_deletes``), which deletes
the file and forgets what was read of it; the next close writes it again from
the states in memory, which no longer hold what was deleted. A compaction
deletes it too (its sections name the old file's bytes).

Trust, as for the scene map (``memhop.domain.map_tail.trusted_tail``): the
``.meh`` still ends in the snapshot it ended in when the state was saved, or
gives the saved digest up to then and walks frame by frame from there; and
the domain deleted nothing since (a file another writer changed), and holds no
damage. Else the domain is indexed in full, as without the file.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import mmap
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memhop.domain.map_tail import Tail, trusted_tail
from memhop.domain.recall_sections import (
    RecallSection,
    decode_sections,
    encode_sections,
    encode_stamp,
)
from memhop.engine import Engine
from memhop.engine.side_files import (
    RECALL_SUFFIX,
    append_side_file,
    remove_side_file,
    replace_side_file,
)
from memhop.errors import CorruptionError, InvalidQueryError, MemHopError
from memhop.index.recall_state import RecallState

__all__ = ["SUFFIX", "RecallFile", "Saved", "resumed"]

log = logging.getLogger("memhop")

SUFFIX = RECALL_SUFFIX
"""The recall file of ``x.meh`` is ``x.meh.recall``."""
STAMPS_MAX = 64
"""Stamps a file takes before a close writes it again, its sections as of that close."""


@dataclass(frozen=True, slots=True)
class Saved:
    """A domain's section of the file, and its state if decoded ahead (``prepare``)."""

    section: RecallSection
    state: RecallState | None = None
    damaged: Callable[[], None] = lambda: None
    """Called when a later read of the state finds a block that does not check."""


class RecallFile:
    """The recall file of one open ``.meh``: read once, taken domain by domain."""

    def __init__(self, file_path: str) -> None:
        self.path = file_path + SUFFIX
        self._mu = threading.Lock()
        self._sections: dict[int, RecallSection] | None = None  # read on first use
        self._decoded: dict[int, RecallState | None] = {}  # by prepare; None: would not read
        self.decoding = 0  # prepares in flight (a domain's build makes way for them)
        self._map: mmap.mmap | None = None  # the file, mapped while sections are read from it
        self._taken: set[int] = set()  # domains whose section was taken (``take``)
        self._damaged: set[int] = set()  # domains whose section a read found damaged

    def _loaded(self) -> dict[int, RecallSection]:
        """The file's sections not taken yet (called holding ``_mu``)."""
        if self._sections is None:
            self._sections = dict(self._read())
        return self._sections

    def prepare(self, agent_id: int) -> None:
        """Decode the domain's section ahead of ``take``, holding no lock meanwhile: a
        domain's first recall does it before it takes the domain's lock."""
        with self._mu:
            section = self._loaded().get(agent_id)
            if section is None or agent_id in self._decoded or agent_id in self._taken:
                return
            self.decoding += 1
        try:
            state: RecallState | None = section.state(functools.partial(self._forget, agent_id))
        except ValueError as exc:
            log.warning("recall state of agent %016x not used: %s", agent_id, exc)
            state = None
        finally:
            with self._mu:
                self.decoding -= 1
        with self._mu:
            if self._loaded().get(agent_id) is section and agent_id not in self._taken:
                self._decoded[agent_id] = state  # not taken, nor deleted, meanwhile

    def take(self, agent_id: int) -> Saved | None:
        """The domain's section, once (the domain keeps its state current from then on);
        None when the file holds none, or holds one that would not read.

        A section taken stays listed: a close that saves no fresh state of its domain
        (its build not done) keeps it, still true for the file up to its end.
        """
        with self._mu:
            section = self._loaded().get(agent_id)
            if section is None or agent_id in self._taken:
                return None
            self._taken.add(agent_id)
            damaged = functools.partial(self._forget, agent_id)
            if agent_id not in self._decoded:
                return Saved(section, damaged=damaged)
            state = self._decoded.pop(agent_id)
            return None if state is None else Saved(section, state, damaged)

    def _forget(self, agent_id: int) -> None:
        """A read of the domain's state found a block that does not check: the next close
        writes the file without its section (a state built again replaces it)."""
        log.warning("recall state of agent %016x is damaged: it is indexed again", agent_id)
        with self._mu:
            self._damaged.add(agent_id)

    def _read(self) -> Mapping[int, RecallSection]:
        """The file's directory (a body is read when taken); the file stays mapped.

        A state read back keeps views of the mapping, so its pages are the file's
        (the page cache's), not the process's own; they go when it lets go of them.
        """
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if sys.platform == "win32" or size == 0:
                    # A mapped file could not be replaced at close there: read it whole.
                    data = f.read()
                    return decode_sections(data)
                self._map = _mapped(f.fileno())
            return decode_sections(memoryview(self._map))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("recall file %s ignored (recall indexes in full): %s", self.path, exc)
            self.close()
            return {}

    def close(self) -> None:
        """Let go of the file (what was not taken from it is forgotten). A state read
        back still holds the pages it views; the mapping goes with the last of them."""
        self._sections, self._decoded = {}, {}  # their views of the mapping go with them
        mapped, self._map = self._map, None
        if mapped is not None:
            with contextlib.suppress(BufferError):  # views out: unmapped when they go
                mapped.close()

    def deleted(self) -> None:
        """Delete the file and forget it: a record is about to be deleted (or the file
        compacted). Called under the engine's lock: it takes none (a state read back
        keeps viewing the unlinked file's pages until it lets go of them)."""
        self.close()
        try:
            remove_side_file(self.path)
        except OSError as exc:
            # Not raised: the delete goes on, and the next close writes over the file.
            log.warning("recall file %s not deleted: %s", self.path, exc)

    def save(self, engine: Engine, states: Iterable[tuple[int, RecallState]]) -> None:
        """Bring the file up to the record end: the given domains' states, the sections of
        the domains not reached this session as they were. Failures are logged."""
        try:
            if engine.damage() != (0, 0):
                return  # a damaged file is indexed in full until it is salvaged
            with self._mu:
                damaged = bool(self._damaged & set(self._loaded()))
                listed = {a: s for a, s in self._loaded().items() if a not in self._damaged}
            end = engine.record_end
            # A state read back and not edited since is what its section holds, and the
            # close brought it up to date: its section is true of the file up to now, so it
            # is not written again (that costs what the domain holds: 1.7 s at 10^5
            # documents), only stamped as of now.
            current = {
                agent
                for agent, state in states
                if state.read_back and state.storable and not state.index.edits and agent in listed
            }
            changed = [(agent, state) for agent, state in states if agent not in current]
            behind = [listed[agent] for agent in current if listed[agent].covered_end != end]
            if not changed and not behind and not damaged:
                return  # nothing new: the file (if any) still holds what it held
            seal, digest = engine.snapshot_seal(), engine.prefix_digest(end)
            stamps = max((s.stamps for s in listed.values()), default=0)
            if not changed and not damaged and stamps + len(behind) <= STAMPS_MAX:
                stamped = b"".join(encode_stamp(s, end, seal, digest) for s in behind)
                append_side_file(self.path, stamped)
                return
            fresh = [(agent, end, seal, digest, state) for agent, state in changed]
            written = {agent for agent, _ in changed}
            kept = [
                section.vouched(end, seal, digest) if agent in current else section
                for agent, section in listed.items()
                if agent not in written
            ]
            chunks = encode_sections(fresh, kept)
            replace_side_file(self.path, chunks, engine.permission_bits())
        except (MemHopError, ValueError, OSError) as exc:
            log.warning("recall file %s not written (recall indexes in full): %s", self.path, exc)


def _mapped(fileno: int) -> mmap.mmap:
    """The file mapped read-only, its pages brought in as a state reads them: a state's
    blocks are checked as they are read, so a first recall reads a few of them (faulting
    all 45 MB of a 10^5-turn domain's file in took 3-4 ms)."""
    return mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)


def resumed(engine: Engine, saved: Saved) -> tuple[RecallState, Tail] | None:
    """The saved state and what the log gained since, if the file still vouches for it.

    No hash of the file when the scene map the same close wrote was checked by its
    seal, before this session's first write (``Engine.vouch_digest``).
    """
    section = saved.section
    agent_id, end = section.agent_id, section.covered_end
    try:
        if engine.damage() != (0, 0):
            return None
        tail = trusted_tail(engine, agent_id, section)
        if tail is None or (
            end < engine.record_end and engine.frames_since(agent_id, end, tombstones=True)
        ):
            return None
        state = section.state(saved.damaged) if saved.state is None else saved.state
    except (InvalidQueryError, CorruptionError, ValueError) as exc:
        log.warning("recall state of agent %016x not used: %s", agent_id, exc)
        return None
    return state, tail
