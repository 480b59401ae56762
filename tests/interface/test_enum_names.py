"""Enum arguments take a member, its number or its name; a bad one is refused listing the names.

The same holds on every face: the Session, the asyncio face and the tool table.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import memhop
import memhop.aio
from memhop import tools

from .conftest import TS, assert_grows, open_new, refused

EVENT_SPELLINGS: list[Any] = ["event", "EVENT", " Event ", memhop.ArchiveKind.EVENT, 1]


@pytest.mark.parametrize("kind", EVENT_SPELLINGS, ids=repr)
def test_an_archive_kind_by_name_member_or_number_is_the_same_event(
    meh_path: str, kind: Any
) -> None:
    with open_new(meh_path) as db:
        me = db.primary()
        me.search()
        assert_grows(
            db,
            lambda: me.append_archive(
                content="weather(Lisbon)", created_at=TS, kind=kind, event_type="tool"
            ),
        )
        for wanted in EVENT_SPELLINGS:  # the read filter takes every spelling too
            rows = me.search_l4(kind=wanted)
            assert [(r.content, r.kind) for r in rows] == [
                ("weather(Lisbon)", memhop.ArchiveKind.EVENT)
            ]
        assert me.search_l4(kind="utterance") == []  # the control: the filter filters


def test_role_and_content_type_take_names(meh_path: str) -> None:
    with open_new(meh_path) as db:
        me = db.primary()
        me.search()
        me.append_archive(content="print(1)", created_at=TS, role="agent", content_type="Code")
        (row,) = me.search_l4(type="code")
        assert (row.role, row.content_type) == (memhop.ArchiveRole.AGENT, memhop.ContentType.CODE)
        assert me.search_l4(type=memhop.ContentType.TEXT) == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"kind": "shout"}, "kind must be one of utterance, event, got 'shout'"),
        ({"role": "boss"}, "role must be one of user, agent, system, got 'boss'"),
        (
            {"content_type": 1.5},
            "content_type must be one of text, image, video, document, audio, code, other"
            " (or its number), not float",
        ),
        ({"kind": True}, "kind must be one of utterance, event (or its number), not bool"),
    ],
)
def test_a_bad_enum_value_is_refused_listing_the_names(
    meh_path: str, arguments: dict[str, Any], message: str
) -> None:
    with open_new(meh_path) as db:
        me = db.primary()
        me.search()
        with refused(db, memhop.InvalidQueryError, 1003, message):
            me.append_archive(content="c", created_at=TS, **arguments)
        me.append_archive(content="c", created_at=TS)  # the control: the defaults are taken


def test_role_dream_by_name_is_refused_as_by_number(meh_path: str) -> None:
    """The library's own role is a member (so its name reads), and every write refuses it."""
    with open_new(meh_path) as db:
        me = db.primary()
        me.search()
        for spelling in ("dream", memhop.ArchiveRole.DREAM, 3):
            with refused(db, memhop.InvalidQueryError, 1003, "speaks as user, agent or system"):
                me.append_archive(content="c", created_at=TS, role=spelling)
        # The control: a role a write may take, by name, is taken.
        me.append_archive(content="c", created_at=TS, role="agent")
        assert [r.role for r in me.search_l4()] == [memhop.ArchiveRole.AGENT]


def test_edge_kinds_take_names_in_a_subgraph_query_and_an_import(meh_path: str) -> None:
    with open_new(meh_path) as db:
        me = db.primary()
        items: list[Any] = [
            {
                "title": "rain",
                "domain": "garden",
                "related": [{"titles": ["mud"], "kind": "causal"}],
            },
            memhop.L3ImportItem(
                title="mud",
                domain="garden",
                related=[memhop.L3Relation(titles=["boots"], kind="part_of")],
            ),
            {"title": "boots", "domain": "garden"},
        ]
        result = me.import_l3(items, memhop.L3ImportMode.SKIP)
        assert result.errors == ()
        graph = me.get_l3(result.graph_ids[0])
        kinds = sorted(e.kind for e in graph.edges)
        assert kinds == [memhop.GraphEdgeKind.CAUSAL, memhop.GraphEdgeKind.PART_OF]
        rain = next(n.id for n in graph.nodes if n.title == "rain")
        by_name = me.query_l3_subgraph(graph.slot.id, rain, 0, ["CAUSAL"])
        by_member = me.query_l3_subgraph(graph.slot.id, rain, 0, [memhop.GraphEdgeKind.CAUSAL])
        assert by_name == by_member
        assert {n.title for n in by_name.nodes} == {"rain", "mud"}  # the causal hop only
        with refused(db, memhop.InvalidQueryError, 1003, "edge_kinds entry must be one of"):
            me.query_l3_subgraph(graph.slot.id, rain, 0, ["sideways"])


def test_the_async_face_and_the_tool_table_take_the_same_names(meh_path: str) -> None:
    async def run() -> tuple[list[str], str]:
        async with memhop.aio.open(
            meh_path, memhop.LocalModel(), profile=memhop.ProfileInput(name="p")
        ) as db:
            me = await db.primary()
            await me.search()
            await me.append_archive(content="a", created_at=TS, kind="event", event_type="t")
            with pytest.raises(memhop.InvalidQueryError) as bad:
                await me.append_archive(content="b", created_at=TS, kind="shout")
            told = await me.dispatch(
                "memory_record", {"content": "c", "kind": "EVENT", "event_type": "t"}
            )
            assert told == {"seq": 4}
            wrong = await me.dispatch("memory_record", {"content": "d", "kind": "shout"})
            assert wrong["error"]["message"] == str(bad.value)  # one refusal, both faces
            rows = await me.search_l4(kind="event")
            return [r.content for r in rows], str(bad.value)

    contents, message = asyncio.run(run())
    assert contents == ["a", "c"]
    assert message == "kind must be one of utterance, event, got 'shout'"
    # The schema offers exactly the names the refusal lists.
    (record,) = [d for d in tools.schemas() if d["function"]["name"] == "memory_record"]
    properties = record["function"]["parameters"]["properties"]
    assert properties["kind"]["enum"] == ["utterance", "event", None]
    assert properties["role"]["enum"] == ["user", "agent", "system", None]
