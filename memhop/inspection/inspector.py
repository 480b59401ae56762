"""Inspector: a read-only view of a ``.meh`` file, safe beside a writer, for notebooks and shells.

Needs no model and takes no lock. Each read (``inspect``, ``refresh``) takes
the file's bytes as they are and applies the engine's recovery rules in
memory: every complete frame counts, a torn tail is where the view stops, and
nothing is ever written, cut or repaired, so the file's bytes and mtime stay
as they were.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Protocol, Self, TypeVar

from memhop.errors import (
    AgentNotFoundError,
    InvalidQueryError,
    MemHopError,
    NotFoundError,
)
from memhop.ids import PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID, format_id, parse_id, profile_id
from memhop.inspection import audit, rows
from memhop.inspection.reader import live_frame, read_file_state
from memhop.inspection.walk import Progress
from memhop.intmap import NO_IDS
from memhop.records import (
    ArchiveKind,
    ArchiveSlot,
    HypergraphEdge,
    HypergraphNode,
    HypergraphSlot,
    PlanNode,
    ProfileSlot,
    RecordType,
    RegistryName,
    SceneNode,
    SceneSlot,
    TopicSlot,
)
from memhop.render.table import Table

__all__ = ["Inspector", "inspect"]


class _Record(Protocol):
    """What every record class offers: its frame type byte and its JSON decoder."""

    RECORD_TYPE: ClassVar[RecordType]

    @classmethod
    def from_json(cls, data: bytes) -> Self: ...


_R = TypeVar("_R", bound=_Record)
_PRIMARY_HEX = format_id(PRIMARY_AGENT_ID)


def inspect(path: str | os.PathLike[str]) -> Inspector:
    """Open ``path`` read-only for inspection (no model, no lock, never a write)."""
    return Inspector(path)


class Inspector:
    """What a ``.meh`` file holds, as tables. ``agent=None`` is the primary domain.

    An ``agent`` argument takes a 16-hex domain id, a sub-agent's name, or the
    primary's profile name; ids are 16 hex digits everywhere. ``refresh()``
    reads again, to see what a writer appended since.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            msg = f"path must be a non-empty str or os.PathLike, not {path!r}"
            raise InvalidQueryError(msg)
        self._path = path
        self._state = read_file_state(path)
        self._decoded: dict[tuple[int, int], Any] = {}  # (agent, id) -> its record
        self._unreadable: set[tuple[int, int]] = set()  # live records that would not decode

    def refresh(self) -> Inspector:
        """Read the file again (what a writer appended since is now visible); returns self."""
        self._state = read_file_state(self._path)
        self._decoded, self._unreadable = {}, set()
        return self

    @property
    def path(self) -> str:
        return self._path

    def __repr__(self) -> str:
        s = self._state
        return f"<memhop.Inspector {self._path!r} {s.size:,} bytes, {self._live_count():,} live>"

    def _repr_html_(self) -> str:
        info = [{"field": k, "value": v} for k, v in self.info().items()]
        return Table(("field", "value"), info, title=f"memhop file {self._path}")._repr_html_()

    # ---- reading records -----------------------------------------------------------------

    def _live_count(self) -> int:
        return sum(len(ids) for ids in self._state.index.values())

    def _ids(self, agent_id: int, rec_type: int) -> list[int]:
        ids = self._state.index.get(agent_id)
        return [] if ids is None else ids.ids_of_type(rec_type, self._state.data, self._state.size)

    def _read(self, agent_id: int, id_hash: int, cls: type[_R]) -> _R | None:
        """One live record decoded, or None when it is absent or will not decode."""
        offset = self._state.index.get(agent_id, NO_IDS).get(id_hash)
        if offset is None:
            return None
        key = (agent_id, id_hash)
        record = self._decoded.get(key)
        if record is None:
            try:
                record = cls.from_json(live_frame(self._state, agent_id, id_hash, offset).payload)
            except MemHopError:
                self._unreadable.add(key)  # the listing says so; verify() names it
                return None
            self._decoded[key] = record
        return record if isinstance(record, cls) else None

    def _all(self, agent_id: int, cls: type[_R]) -> list[_R]:
        found = (self._read(agent_id, i, cls) for i in self._ids(agent_id, cls.RECORD_TYPE))
        return [r for r in found if r is not None]

    def _listing(self, columns: Sequence[str], found: list[dict[str, Any]], title: str) -> Table:
        """A listing; its footer says when records of the file would not read."""
        bad = len(self._unreadable)
        footer = f"{bad} record(s) would not read and are left out; verify() names them"
        return Table(columns, found, title=title, footer=footer if bad else "")

    def _names(self) -> dict[int, str]:
        """Sub-agent domain -> its registered name."""
        names: dict[int, str] = {}
        for agent_id in sorted(self._state.index):
            if agent_id in (PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID):
                continue
            for reg in self._all(agent_id, RegistryName):
                if reg.name:
                    names[agent_id] = reg.name
        return names

    def _agent(self, agent: str | None) -> int:
        """The domain id an ``agent`` argument names; AgentNotFoundError when none matches."""
        if agent is None or agent == _PRIMARY_HEX:
            return PRIMARY_AGENT_ID
        if not isinstance(agent, str):
            msg = f"agent must be a 16-hex id or a sub-agent name, not {type(agent).__name__}"
            raise InvalidQueryError(msg)
        names = self._names()
        # A name two domains registered is the higher id's, as in the live registry.
        for agent_id, name in sorted(names.items(), reverse=True):
            if name == agent.strip():
                return agent_id
        try:
            parsed: int | None = parse_id(agent, "agent")
        except InvalidQueryError:
            parsed = None
        if parsed is not None and (parsed in names or parsed in self._state.index):
            return parsed
        primary = self._read(PRIMARY_AGENT_ID, profile_id(), ProfileSlot)
        if primary is not None and primary.name and primary.name == agent.strip():
            return PRIMARY_AGENT_ID  # the name agents() shows for it (sub-agents' names first)
        msg = f"{self._path} has no agent {agent!r} (see agents())"
        raise AgentNotFoundError(msg)

    def _topics(self, agent_id: int) -> dict[int, TopicSlot]:
        return {t.id: t for t in self._all(agent_id, TopicSlot)}

    def _id_arg(self, text: str | None, what: str) -> int | None:
        return None if text is None else parse_id(text, what)

    # ---- listings ------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """A summary of the file: size, header generation, snapshot state, records, damage."""
        s = self._state
        header = s.headers.current
        return {
            "path": self._path,
            "file_bytes": s.size,
            "format": f"0x{header.version:04x}",
            "active_header": "AB"[s.headers.active],
            "commit_id": header.commit_id,
            "snapshot": s.snapshot.value,
            "live_records": self._live_count(),
            "agents": len(self.agents()),
            "frames_scanned": s.scan.frames,
            "damaged_frames_skipped": s.scan.skipped,
            "torn_tail_at": s.scan.end if s.scan.truncate and not s.scan.reserve else None,
            "unread_from": s.scan.unresolved or None,  # damage too long to search past
        }

    def agents(self) -> Table:
        """The primary first, then every sub-agent in id order."""
        names = self._names()
        out = []
        for agent_id in [PRIMARY_AGENT_ID, *sorted(names)]:
            profile = self._read(agent_id, profile_id(), ProfileSlot)
            out.append(
                {
                    "id": format_id(agent_id),
                    "name": names.get(agent_id) or (profile.name if profile else ""),
                    "primary": agent_id == PRIMARY_AGENT_ID,
                    "scenes": len(self._ids(agent_id, RecordType.SCENE)),
                    "topics": len(self._ids(agent_id, RecordType.TOPIC)),
                    "records": len(self._state.index.get(agent_id, NO_IDS)),
                }
            )
        columns = ("id", "name", "primary", "scenes", "topics", "records")
        return self._listing(columns, out, title="agents")

    def profile(self, agent: str | None = None) -> Table:
        """The domain's L0 profile as one row (no rows when it has none)."""
        agent_id = self._agent(agent)
        slot = self._read(agent_id, profile_id(), ProfileSlot)
        found = [] if slot is None else [rows.profile_row(agent_id, slot)]
        columns = tuple(rows.profile_row(agent_id, ProfileSlot()))
        return self._listing(columns, found, title="profile")

    def scenes(self, agent: str | None = None) -> Table:
        """The domain's scenes, most recently used first."""
        agent_id = self._agent(agent)
        per_scene: dict[int, int] = {}
        for topic in self._topics(agent_id).values():
            per_scene[topic.scene_id] = per_scene.get(topic.scene_id, 0) + 1
        found = sorted(
            self._all(agent_id, SceneSlot),
            key=lambda s: (-s.last_used_at, -s.turn_seq, s.scene_id),
        )
        out = [rows.scene_row(s, per_scene.get(s.scene_id, 0)) for s in found]
        columns = ("scene_id", "name", "turns", "topics", "last_used_at", "l3_id")
        return self._listing(columns, out, title="scenes")

    def _scene_id(self, agent_id: int, scene: str | None) -> int | None:
        """A scene argument (16-hex id or scene name) as an id; None for all scenes."""
        if scene is None:
            return None
        for slot in self._all(agent_id, SceneSlot):
            if slot.scene_name == scene or format_id(slot.scene_id) == scene.lower():
                return slot.scene_id
        msg = f"no scene {scene!r} in agent {format_id(agent_id)} (see scenes())"
        raise NotFoundError(msg)

    def topics(self, agent: str | None = None, scene: str | None = None) -> Table:
        """Every topic (turns and Dream's fused rows), by scene then time, with provenance."""
        agent_id = self._agent(agent)
        scene_id = self._scene_id(agent_id, scene)
        topics = [t for t in self._topics(agent_id).values() if scene_id in (None, t.scene_id)]
        slots = self._all(agent_id, ArchiveSlot)
        lines: dict[int, int] = {}
        firsts: dict[int, ArchiveSlot] = {}
        for slot in slots:
            lines[slot.topic_id] = lines.get(slot.topic_id, 0) + 1
            if slot.seq == 1:
                firsts[slot.topic_id] = slot
        by_scene: dict[int, list[TopicSlot]] = {}
        for topic in topics:
            by_scene.setdefault(topic.scene_id, []).append(topic)
        out = []
        for sid in sorted(by_scene):
            members = sorted(by_scene[sid], key=lambda t: (t.user_timestamp, t.id))
            provenance = rows.provenance_of(members, firsts)
            out += [rows.topic_row(t, provenance[t.id], lines.get(t.id, 0)) for t in members]
        return self._listing(rows.TOPIC_COLUMNS, out, title="topics")

    def _content_rows(
        self, agent: str | None, topic: str | None, kind: ArchiveKind | None
    ) -> list[dict[str, Any]]:
        agent_id = self._agent(agent)
        topic_id = self._id_arg(topic, "topic")
        topics = self._topics(agent_id)
        picked = [
            s
            for s in self._all(agent_id, ArchiveSlot)
            if topic_id in (None, s.topic_id) and kind in (None, s.kind)
        ]

        def order(s: ArchiveSlot) -> tuple[int, int, int, int]:
            t = topics.get(s.topic_id)
            return (
                (t.scene_id, t.user_timestamp, s.topic_id, s.seq)
                if t
                else (0, 0, s.topic_id, s.seq)
            )

        picked.sort(key=order)
        return [rows.content_row(s, getattr(topics.get(s.topic_id), "scene_id", 0)) for s in picked]

    def content(self, agent: str | None = None, topic: str | None = None) -> Table:
        """The L4 lines (utterances and events), by scene, topic and seq."""
        found = self._content_rows(agent, topic, None)
        return self._listing(rows.CONTENT_COLUMNS, found, title="content")

    def events(self, agent: str | None = None, topic: str | None = None) -> Table:
        """Only the L4 events (tool calls, observations), by scene, topic and seq."""
        found = self._content_rows(agent, topic, ArchiveKind.EVENT)
        return self._listing(rows.CONTENT_COLUMNS, found, title="events")

    def plans(self, agent: str | None = None, topic: str | None = None) -> Table:
        """Every L5 plan step, by scene, topic and seq."""
        agent_id = self._agent(agent)
        topic_id = self._id_arg(topic, "topic")
        topics = self._topics(agent_id)
        nodes = [n for n in self._all(agent_id, PlanNode) if topic_id in (None, n.topic_id)]
        scene_of = {tid: t.scene_id for tid, t in topics.items()}
        nodes.sort(key=lambda n: (scene_of.get(n.topic_id, 0), n.topic_id, n.seq))
        out = [rows.plan_row(n, scene_of.get(n.topic_id, 0)) for n in nodes]
        return self._listing(rows.PLAN_COLUMNS, out, title="plans")

    def l1(self, agent: str | None = None) -> Table:
        """The domain's L1 scene nodes (Dream's associative layer), most important first."""
        agent_id = self._agent(agent)
        nodes = sorted(self._all(agent_id, SceneNode), key=lambda n: (-n.importance, n.scene_id))
        out = [rows.l1_row(n) for n in nodes]
        columns = tuple(rows.l1_row(SceneNode(id_hash=0)))
        return self._listing(columns, out, title="l1")

    def graphs(self) -> Table:
        """The shared pool's L3 graphs with their node and edge counts."""
        pool = SHARED_POOL_AGENT_ID
        nodes: dict[int, int] = {}
        edges: dict[int, int] = {}
        for node in self._all(pool, HypergraphNode):
            nodes[node.graph_id] = nodes.get(node.graph_id, 0) + 1
        for edge in self._all(pool, HypergraphEdge):
            edges[edge.graph_id] = edges.get(edge.graph_id, 0) + 1
        found = sorted(self._all(pool, HypergraphSlot), key=lambda g: (g.name, g.id_hash))
        out = [rows.graph_row(g, nodes.get(g.id_hash, 0), edges.get(g.id_hash, 0)) for g in found]
        columns = ("graph_id", "name", "nodes", "edges", "created_at", "updated_at")
        return self._listing(columns, out, title="graphs")

    # ---- the whole file ------------------------------------------------------------------

    def lookup(self, record_id: str) -> Table:
        """Every live record with this id, in any domain, with its stored JSON.

        CorruptionError (or CRCMismatchError) naming the entry when one of them will not
        read, as the engine's read of it would be.
        """
        id_hash = parse_id(record_id, "id")
        out = []
        for agent_id, ids in sorted(self._state.index.items()):
            offset = ids.get(id_hash)
            if offset is not None:
                frame = live_frame(self._state, agent_id, id_hash, offset)
                out.append(
                    {
                        "agent": format_id(agent_id),
                        "type": audit.type_name(frame.rec_type),
                        "id": format_id(id_hash),
                        "offset": offset,
                        "record": audit.stored_json(frame.payload),
                    }
                )
        return Table(audit.RECORD_COLUMNS, out, title=f"id {record_id}")

    def grep(self, text: str, agent: str | None = None) -> Table:
        """Live records whose stored values hold ``text`` (case-insensitive), in log order."""
        if not isinstance(text, str) or not text:
            msg = "grep needs a non-empty text"
            raise InvalidQueryError(msg)
        only = None if agent is None else format_id(self._agent(agent))
        needle = text.casefold()
        out = [
            record
            for record in self.records()
            if only in (None, record["agent"])
            and needle in json.dumps(record["record"], ensure_ascii=False).casefold()
        ]
        return Table(audit.RECORD_COLUMNS, out, title=f"grep {text!r}")

    def records(self, progress: Progress | None = None) -> Iterator[dict[str, Any]]:
        """Every live record in log order as agent, type, id, offset and its stored JSON."""
        return audit.live_records(self._state, progress)

    def frames(self, limit: int | None = None, progress: Progress | None = None) -> Table:
        """Every frame, snapshot blob and damaged stretch of the log, in file order."""
        return audit.frames_table(self._state, limit, progress)

    def stats(self, progress: Progress | None = None) -> Table:
        """Live and dead records and bytes per record type, tombstones, and the snapshot state."""
        return audit.stats_table(self._state, progress)

    def verify(self, progress: Progress | None = None) -> audit.Verification:
        """A full check that lists every damaged header, frame, blob, payload and index entry."""
        return audit.verify(self._state, progress)
