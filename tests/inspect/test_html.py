"""Tables and results render in a notebook: HTML for 10 or 100,000 rows, pandas, dicts."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime

import pytest

import memhop
from tests.inspect.conftest import Demo


def _body_rows(markup: str) -> int:
    return len(re.findall(r"<tr>", markup)) - 1  # minus the header row


def test_a_short_table_shows_every_row_and_a_long_one_its_head_tail_and_count() -> None:
    short = memhop.Table(("n", "text"), [{"n": i, "text": f"row {i}"} for i in range(10)])
    markup = short._repr_html_()
    assert _body_rows(markup) == 10
    assert "10 rows" in markup
    assert "more rows" not in markup
    big = memhop.Table(("n",), ({"n": i} for i in range(100_000)))
    markup = big._repr_html_()
    assert "100,000 rows" in markup
    assert "99,960 more rows" in markup
    assert _body_rows(markup) == 41  # 30 head, the gap line, 10 tail
    assert "<td>99999</td>" in markup
    assert "<td>50000</td>" not in markup


def test_cells_are_escaped_and_kept_to_one_short_line(demo: Demo) -> None:
    events = memhop.inspect(demo.path).events()
    markup = events._repr_html_()
    assert "watered &lt;bed&gt; 1" in markup
    assert "<bed>" not in markup
    long = memhop.Table(("text",), [{"text": "word\nword " * 500}])._repr_html_()
    assert "\n" not in long
    assert "…" in long
    assert len(long) < 1000


def test_to_pandas_has_names_aware_times_and_a_scene_id(demo: Demo) -> None:
    pd = pytest.importorskip("pandas")
    content = memhop.inspect(demo.path).content()
    frame = content.to_pandas()
    assert list(frame.columns) == list(content.columns)
    assert len(frame) == len(content)
    assert set(frame["role"]) == {"user", "agent", "dream"}  # names, not 0, 1, 3
    assert isinstance(frame["created_at"].dtype, pd.DatetimeTZDtype)
    assert str(frame["created_at"].dt.tz) == "UTC"
    assert frame["scene_id"].tolist() == [demo.scene_id] * len(frame)
    first = content.to_dicts()[0]
    assert isinstance(first["created_at"], datetime)
    assert first["created_at"].tzinfo == UTC


def test_to_pandas_without_pandas_names_the_extra(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = memhop.inspect(demo.path).scenes()
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if it were not installed
    with pytest.raises(memhop.ConfigError, match=r"pip install 'pandas>=2.0'"):
        table.to_pandas()
    monkeypatch.undo()
    pytest.importorskip("pandas")
    assert len(table.to_pandas()) == len(table)  # positive control


def test_table_is_a_read_only_sequence(demo: Demo) -> None:
    topics = memhop.inspect(demo.path).topics()
    row = topics[0]
    row["depth"] = 99  # a copy: the table is not changed through it
    assert topics[0]["depth"] != 99
    assert len(topics[:2]) == 2
    assert isinstance(topics[:2], memhop.Table)
    assert "topics" in repr(topics)
    assert demo.turn_ids[0] in str(topics)


def test_the_live_results_render_as_html(demo: Demo) -> None:
    with memhop.open(demo.path, memhop.LocalModel()) as db:
        me = db.primary()
        context = me.scene_context()
        profile = me.get_l0()
        stats = db.stats()
    markup = context._repr_html_()
    assert "<caption>topics</caption>" in markup  # SceneContext's rows as a table
    assert all(t.topic_id in markup for t in context.topics)
    assert "2023-11-14 22:13:20.000+00:00" in markup  # millisecond stamps read as times
    assert ">user<" in markup  # enum members by name
    assert "Ada" in profile._repr_html_()
    assert "<caption>model_usage</caption>" in stats._repr_html_()
