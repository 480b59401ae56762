"""docs/format.md's worked examples, recomputed by memhop's own code (engine-level, white-box)."""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import zlib
from pathlib import Path

import pytest

from memhop import ids
from memhop import records as r
from memhop.engine import (
    DATA_START,
    FLAG_DELETED,
    FORMAT_VERSION,
    HEADER_SIZE,
    RECORD_HEADER_SIZE,
    SNAPSHOT_VERSION,
    FileHeader,
    build_snapshot,
    create_engine,
    encode_frame,
)
from memhop.engine.frame import MAX_PAYLOAD_BYTES
from memhop.errors import InvalidQueryError
from tests.docs._docs import DOCS

FORMAT_MD = DOCS / "format.md"
PAYLOAD_TYPES: dict[int, type] = {
    r.RecordType.PROFILE: r.ProfileSlot,
    r.RecordType.SCENE_NODE: r.SceneNode,
    r.RecordType.SCENE_EDGE: r.SceneEdge,
    r.RecordType.TOPIC: r.TopicSlot,
    r.RecordType.SCENE: r.SceneSlot,
    r.RecordType.GRAPH_NODE: r.HypergraphNode,
    r.RecordType.GRAPH_EDGE: r.HypergraphEdge,
    r.RecordType.ARCHIVE: r.ArchiveSlot,
    r.RecordType.GRAPH_SLOT: r.HypergraphSlot,
    r.RecordType.PLAN_NODE: r.PlanNode,
}


@pytest.fixture(scope="module")
def page() -> str:
    return FORMAT_MD.read_text(encoding="utf-8")


def spaced(frame: bytes) -> str:
    """A frame as the page writes it: type flags length agent id crc payload."""
    cuts = [(0, 1), (1, 2), (2, 6), (6, 14), (14, 22), (22, 26), (26, len(frame))]
    return " ".join(frame[a:b].hex() for a, b in cuts if b > a)


def test_the_layout_numbers_are_the_engines(page: str) -> None:
    assert (HEADER_SIZE, DATA_START, RECORD_HEADER_SIZE) == (4096, 8192, 26)
    assert FORMAT_VERSION == 0x0012
    assert f"format {FORMAT_VERSION:#06x}" in page
    assert f"| header B | {HEADER_SIZE} | {HEADER_SIZE} |" in page
    assert f"| record area | {DATA_START} |" in page
    assert f"A fresh file is exactly {DATA_START} bytes" in page
    assert f"a {RECORD_HEADER_SIZE}-byte header" in page


def test_the_frame_limit_is_the_engines(page: str) -> None:
    assert MAX_PAYLOAD_BYTES == (1 << 24) - 1
    text = page.replace("\n", " ")
    assert f"at most {MAX_PAYLOAD_BYTES:,} bytes (16 MiB - 1" in text
    assert f"frame of more than {MAX_PAYLOAD_BYTES:,} bytes" in text
    largest = encode_frame(0, 1, 0, 1, bytes(MAX_PAYLOAD_BYTES))
    assert largest[5] == 0  # the length's high byte
    with pytest.raises(InvalidQueryError, match="frame limit"):
        encode_frame(0, 1, 0, 1, bytes(MAX_PAYLOAD_BYTES + 1))


def test_the_fresh_header_crc(page: str) -> None:
    slot = FileHeader().to_bytes()
    crc = zlib.crc32(slot[:4088])
    assert struct.unpack_from("<I", slot, 4088)[0] == crc
    assert f"is `{crc:#010x}`, stored little-endian as `{slot[4088:4092].hex(' ')}`" in page


def test_the_checkpointed_file_is_the_one_the_page_walks_through(page: str, tmp_path: Path) -> None:
    """One "hello" frame and a checkpoint: slot B, its CRC, the snapshot and the size."""
    path = tmp_path / "hello.meh"
    engine = create_engine(str(path))
    assert engine.write(0, 0x01, 12345, b"hello") == DATA_START
    engine.checkpoint()
    engine.close_without_checkpoint()
    data = path.read_bytes()
    frame = encode_frame(0, 0x01, 0, 12345, b"hello")
    snapshot = build_snapshot({0: {12345: DATA_START}})
    assert data == FileHeader().to_bytes() + data[4096:8192] + frame + snapshot
    assert f"The file is\n{len(data)} bytes: {DATA_START} + the {len(frame)}-byte frame" in page
    assert f"+ the {len(snapshot)}-byte snapshot" in page
    slot_b = data[4096:8192]
    fields = struct.unpack_from("<4sHHQQIIIQ", slot_b)
    assert fields == (b"MEH2", 0x0012, 0, 1, 8223, len(snapshot), 1, 0, 8223)
    shown = re.search(r"```text\n(4d454832[0-9a-f ]+)\n", page)
    assert shown is not None
    assert shown.group(1).replace(" ", "") == slot_b[:44].hex()
    crc = zlib.crc32(slot_b[:4088])
    assert f"is `{crc:#010x}` (`{slot_b[4088:4092].hex(' ')}` at 4088)" in page
    assert f"at {DATA_START} + {len(frame)} = {DATA_START + len(frame)}" in page


def test_the_three_frames(page: str) -> None:
    live = encode_frame(0, 0x01, 0, 12345, b"hello")
    tombstone = encode_frame(0, 0x01, FLAG_DELETED, 12345, b"")
    worker = 0x1122334455667788
    registry = encode_frame(
        worker, r.RecordType.REGISTRY, 0, worker, r.RegistryName(name="worker").to_json()
    )
    for frame in (live, tombstone, registry):
        assert spaced(frame) in page, spaced(frame)
    header_crc = zlib.crc32(live[:22])
    assert f"bytes [0, 22) is `{header_crc:#010x}`" in page
    assert f"it\nis `{zlib.crc32(b'hello', header_crc):#010x}`" in page
    assert struct.unpack_from("<I", live, 22)[0] == zlib.crc32(b"hello", header_crc)


def table_rows(page: str) -> list[list[str]]:
    rows = []
    for line in page.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def omitted_when_zero(cls: type) -> set[str]:
    """The keys Go's omitempty leaves out: absent from a record whose fields are all zero."""
    required = {
        f.name: 1
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    written = json.loads(cls(**required).to_json())
    return {f.name for f in dataclasses.fields(cls)} - set(written)


def test_the_record_table_lists_every_type_and_its_keys_in_order(page: str) -> None:
    listed: dict[int, list[str]] = {}
    for row in table_rows(page):
        if re.fullmatch(r"`0x[0-9a-f]{2}`", row[0]) and len(row) == 4:
            listed[int(row[0].strip("`"), 16)] = re.findall(r"`([a-z_0-9?]+)`", row[3])
    assert set(listed) == {int(t) for t in r.RecordType}
    for code, cls in PAYLOAD_TYPES.items():
        optional = omitted_when_zero(cls)
        expected = [f.name + ("?" if f.name in optional else "") for f in dataclasses.fields(cls)]
        assert listed[code] == expected, cls.__name__
    assert listed[r.RecordType.REGISTRY] == []  # "a JSON string, not an object"
    assert r.RegistryName(name="worker").to_json() == b'"worker"'


def test_every_hashed_string_on_the_page_has_the_id_shown(page: str) -> None:
    """Each table row pairing a backticked string with a 16-hex id is xxh64 of that string."""
    checked = 0
    for row in table_rows(page):
        strings = [c for c in row if re.fullmatch(r"`[^`]*`|`` \(empty\)", c)]
        hexes = [m for c in row for m in re.findall(r"^`([0-9a-f]{16})`", c)]
        if len(strings) >= 1 and hexes:
            text = "" if strings[0] == "`` (empty)" else strings[0].strip("`")
            assert ids.format_id(ids.hash_id(text)) == hexes[-1], text
            checked += 1
    assert checked >= 18


def test_the_derivation_functions_give_the_pages_chain(page: str) -> None:
    scene = 0x0123456789ABCDEF
    turn = ids.turn_topic_id(scene, 1)
    assert f"`{ids.format_id(scene)}` ({scene})" in page
    assert f"`{ids.format_id(turn)}` ({turn})" in page
    for value in (
        ids.content_id(turn, r.SEQ_USER),
        ids.content_id(turn, r.SEQ_AGENT),
        ids.content_id(turn, 3),
        ids.plan_node_id(turn, 1),
        ids.scene_node_id(scene),
        ids.profile_id(),
        ids.fused_topic_id(100, 1000, 1001, [12, 11]),
        ids.l1_edge_id(2, 1),
    ):
        assert f"`{ids.format_id(value)}`" in page
    graph = ids.graph_id("project")
    lisbon, porto = ids.graph_node_id(graph, "Lisbon"), ids.graph_node_id(graph, "Porto")
    edge = ids.graph_edge_id(graph, [lisbon, porto], r.GraphEdgeKind.RELATED)
    for value in (graph, lisbon, porto, edge):
        assert f"`{ids.format_id(value)}`" in page
    assert f"[{min(lisbon, porto)} {max(lisbon, porto)}]:0`" in page
    assert ids.SHARED_POOL_AGENT_ID.to_bytes(8, "big")[:2] == b"L3"
    assert f"`{ids.format_id(ids.SHARED_POOL_AGENT_ID)}`" in page


def test_the_snapshot_examples(page: str) -> None:
    assert SNAPSHOT_VERSION == 0x03
    one = build_snapshot({0: {12345: DATA_START}})
    cuts = [(0, 4), (4, 5), (5, 9), (9, 17), (17, 21), (21, 29), (29, 37), (37, 41)]
    assert " ".join(one[a:b].hex() for a, b in cuts) in page
    empty = build_snapshot({})
    assert f"the {len(empty)} bytes `{empty.hex()}`" in page
