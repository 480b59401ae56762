"""The byte-level views of a read: every frame, space by record type, and a full verification.

These walk the whole record area (``walk.walk_regions``) rather than the live
index, so they see superseded versions, tombstones, snapshot blobs and
damage. ``verify`` reports every problem with its offset instead of stopping
at the first; it reads and never repairs.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memhop.engine.frame import FLAG_DELETED
from memhop.engine.header import (
    DATA_START,
    HEADER_A_OFFSET,
    HEADER_B_OFFSET,
    HEADER_SIZE,
    parse_header,
)
from memhop.errors import MemHopError
from memhop.ids import format_id
from memhop.inspection.reader import FileState
from memhop.inspection.walk import Progress, Region, RegionKind, walk_regions
from memhop.intmap import NO_IDS
from memhop.records import (
    ArchiveSlot,
    HypergraphEdge,
    HypergraphNode,
    HypergraphSlot,
    PlanNode,
    ProfileSlot,
    RecordType,
    RegistryName,
    SceneEdge,
    SceneNode,
    SceneSlot,
    TopicSlot,
)
from memhop.render.table import Table

__all__ = [
    "DECODERS",
    "RECORD_COLUMNS",
    "Verification",
    "frames_table",
    "live_records",
    "stats_table",
    "stored_json",
    "type_name",
    "verify",
]

DECODERS: dict[int, Any] = {
    cls.RECORD_TYPE: cls
    for cls in (
        ProfileSlot,
        SceneNode,
        SceneEdge,
        TopicSlot,
        SceneSlot,
        HypergraphNode,
        HypergraphEdge,
        ArchiveSlot,
        HypergraphSlot,
        PlanNode,
        RegistryName,
    )
}
"""Record type byte -> the record class that decodes its payload."""

PROBLEM_COLUMNS = ("offset", "where", "agent", "id", "problem")


def type_name(rec_type: int) -> str:
    """A type byte by its lower-case name, or its hex value when it has none."""
    try:
        return RecordType(rec_type).name.lower()
    except ValueError:
        return f"0x{rec_type:02x}"


RECORD_COLUMNS = ("agent", "type", "id", "offset", "record")
"""The columns of a listing of whole records (lookup, grep, export)."""


_SHOWN_DEPTH = 256
"""Nesting a payload may have to be shown as Python values; a deeper one is shown as its text.

Python's parser, printers and ``json.dumps`` recurse once per level and share
one limit (about 1,000 frames) with whoever calls them, so a crafted payload
nested thousands deep would raise RecursionError in whichever of them meets
it first. No record memhop or upstream writes comes near this depth.
"""


def _nested_within(value: Any, limit: int) -> bool:
    """Whether ``value``'s lists and dicts nest at most ``limit`` deep (walked, not recursed)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > limit:
                return False
            stack.extend((child, depth + 1) for child in item)
    return True


def stored_json(raw: bytes) -> Any:
    """A payload's stored JSON as Python values; its text if it is not JSON or nests deeper
    than ``_SHOWN_DEPTH``; None if empty."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return raw.decode("utf-8", "replace")
    # Only a payload with that many brackets can nest that deep: the usual one skips the walk.
    brackets = raw.count(b"[") + raw.count(b"{")
    if brackets > _SHOWN_DEPTH and not _nested_within(value, _SHOWN_DEPTH):
        return raw.decode("utf-8", "replace")
    return value


def _payload(state: FileState, region: Region) -> Any:
    return stored_json(state.data[region.payload_start : region.end])


def _is_live(state: FileState, region: Region) -> bool:
    return state.index.get(region.agent_id, NO_IDS).get(region.id_hash) == region.offset


def frames_table(
    state: FileState, limit: int | None = None, progress: Progress | None = None
) -> Table:
    """Every region of the log in file order; ``limit`` stops after that many rows."""
    rows: list[dict[str, Any]] = []
    for region in walk_regions(state.data, state.size, progress):
        if limit is not None and len(rows) >= limit:
            break
        is_frame = region.kind == RegionKind.FRAME
        rows.append(
            {
                "offset": region.offset,
                "kind": region.kind.value,
                "type": type_name(region.rec_type) if is_frame else "",
                "flags": region.flags,
                "deleted": bool(region.flags & FLAG_DELETED),
                "live": is_frame and _is_live(state, region),
                "agent": format_id(region.agent_id) if is_frame else "",
                "id": format_id(region.id_hash) if is_frame else "",
                "size": region.end - region.offset,
                "payload": _payload(state, region) if is_frame else region.problem,
            }
        )
    columns = ("offset", "kind", "type", "flags", "deleted", "live", "agent", "id", "size")
    return Table((*columns, "payload"), rows, title=f"frames of {state.path}")


def stats_table(state: FileState, progress: Progress | None = None) -> Table:
    """Live and dead records and bytes per record type, tombstones, snapshot blobs, damage."""
    counts: Counter[tuple[str, str]] = Counter()
    for region in walk_regions(state.data, state.size, progress):
        size = region.end - region.offset
        if region.kind != RegionKind.FRAME:
            key = region.kind.value if not region.problem else f"{region.kind.value} (bad)"
            counts[key, "dead"] += 1
            counts[key, "dead_bytes"] += size
            continue
        key = type_name(region.rec_type)
        if region.flags & FLAG_DELETED:
            counts[key, "tombstones"] += 1
            counts[key, "tombstone_bytes"] += size
        elif _is_live(state, region):
            counts[key, "live"] += 1
            counts[key, "live_bytes"] += size
        else:
            counts[key, "dead"] += 1
            counts[key, "dead_bytes"] += size
    current = state.headers.current
    if current.has_snapshot and state.size >= current.snapshot_offset + current.snapshot_length:
        # The active snapshot is the one blob that is not dead weight.
        counts["snapshot", "live"] += 1
        counts["snapshot", "live_bytes"] += current.snapshot_length
        counts["snapshot", "dead"] -= 1
        counts["snapshot", "dead_bytes"] -= current.snapshot_length
    kinds = sorted({kind for kind, _ in counts})
    fields = ("live", "live_bytes", "dead", "dead_bytes", "tombstones", "tombstone_bytes")
    rows = [{"type": kind, **{f: counts[kind, f] for f in fields}} for kind in kinds]
    footer = (
        f"{state.size:,} bytes; headers {DATA_START:,}; snapshot {state.snapshot.value}"
        f"; scan ended at {state.scan.end:,}"
    )
    return Table(("type", *fields), rows, title=f"space in {state.path}", footer=footer)


@dataclass(frozen=True, slots=True)
class Verification:
    """What ``verify`` found: ``ok`` when ``problems`` is empty."""

    path: str
    file_bytes: int
    frames: int
    problems: Table

    @property
    def ok(self) -> bool:
        return len(self.problems) == 0

    def summary(self) -> str:
        verdict = "no damage found" if self.ok else f"{len(self.problems)} problem(s)"
        return f"{self.path}: {self.frames:,} frames, {self.file_bytes:,} bytes checked: {verdict}"

    def __repr__(self) -> str:
        return f"<memhop.Verification {self.summary()}>"

    def _repr_html_(self) -> str:
        summary = html.escape(self.summary())
        return f"<p>{summary}</p>" + ("" if self.ok else self.problems._repr_html_())


def _header_problems(state: FileState) -> Iterator[dict[str, Any]]:
    for name, offset in (("header A", HEADER_A_OFFSET), ("header B", HEADER_B_OFFSET)):
        try:
            parse_header(state.data[offset : offset + HEADER_SIZE])
        except MemHopError as exc:
            yield {"offset": offset, "where": name, "agent": "", "id": "", "problem": str(exc)}
    if state.snapshot.value == "unusable":
        current = state.headers.current
        yield {
            "offset": current.snapshot_offset,
            "where": "snapshot",
            "agent": "",
            "id": "",
            "problem": f"the active header names a snapshot of {current.snapshot_length} bytes "
            "that is out of bounds or damaged",
        }


def verify(state: FileState, progress: Progress | None = None) -> Verification:
    """Check both headers, every frame and blob, each live record's payload and index entry."""
    problems = list(_header_problems(state))
    frames = 0
    held: dict[int, tuple[int, int, bool]] = {}  # frame start -> (agent, id, tombstone)
    for region in walk_regions(state.data, state.size, progress):
        if region.problem:
            where = "frame" if region.kind == RegionKind.DAMAGE else region.kind.value
            problems.append(_problem(region.offset, where, 0, 0, region.problem, agent=False))
            continue
        if region.kind != RegionKind.FRAME:
            continue
        frames += 1
        deleted = bool(region.flags & FLAG_DELETED)
        held[region.offset] = (region.agent_id, region.id_hash, deleted)
        if deleted or not _is_live(state, region):
            continue
        decoder = DECODERS.get(region.rec_type)
        if decoder is None:
            text = f"unknown record type 0x{region.rec_type:02x}"
            problems.append(
                _problem(region.offset, "record", region.agent_id, region.id_hash, text)
            )
            continue
        try:
            decoder.from_json(state.data[region.payload_start : region.end])
        except MemHopError as exc:
            problems.append(
                _problem(region.offset, "record", region.agent_id, region.id_hash, str(exc))
            )
    for agent_id, ids in state.index.items():
        for id_hash, offset in ids.items():
            text = _entry_problem(held.get(offset), agent_id, id_hash, offset)
            if text:
                problems.append(_problem(offset, "index", agent_id, id_hash, text))
    problems.sort(key=lambda p: p["offset"])
    table = Table(PROBLEM_COLUMNS, problems, title=f"problems in {state.path}")
    return Verification(state.path, state.size, frames, table)


def _entry_problem(
    frame: tuple[int, int, bool] | None, agent_id: int, id_hash: int, offset: int
) -> str:
    """Why an index entry is wrong ("" when it is not): a live entry names a sound frame
    of its own agent and id that is not a tombstone, as the engine's read checks."""
    if frame is None:
        return f"the index names offset {offset}, where no sound frame starts"
    held_agent, held_id, deleted = frame
    if (held_agent, held_id) != (agent_id, id_hash):
        return (
            f"the index names offset {offset}, whose frame holds agent {held_agent:016x}"
            f" id {held_id:016x}, not this record"
        )
    return f"the index names the tombstone at offset {offset}" if deleted else ""


def _problem(
    offset: int, where: str, agent_id: int, id_hash: int, text: str, *, agent: bool = True
) -> dict[str, Any]:
    return {
        "offset": offset,
        "where": where,
        "agent": format_id(agent_id) if agent else "",
        "id": format_id(id_hash) if agent else "",
        "problem": text,
    }


def live_records(state: FileState, progress: Progress | None = None) -> Iterator[dict[str, Any]]:
    """Every live record in log order: agent, type, id, offset and its stored JSON."""
    for region in walk_regions(state.data, state.size, progress):
        if region.kind == RegionKind.FRAME and _is_live(state, region):
            yield {
                "agent": format_id(region.agent_id),
                "type": type_name(region.rec_type),
                "id": format_id(region.id_hash),
                "offset": region.offset,
                "record": _payload(state, region),
            }
