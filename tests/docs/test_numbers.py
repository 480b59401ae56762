"""Every number the docs state with a unit is read back from the code.

The scan covers README.md and docs/**/*.md except three pages held to the code
another way: api.md (generated from it), format.md (tests/docs/test_format.py
recomputes its bytes) and performance.md (measured figures, rewritten by the
benches). A page that states "N rows" (or KiB, bytes, days, runes, keywords,
tokens, tools) with an N the code does not hold for that unit
fails here: correct the page, or add the constant it names to ``ALLOWED``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import memhop
import memhop.tools
from memhop.config import DEFAULT_MAX_OUTPUT_TOKENS
from memhop.domain.recall_sections import STAMP_SIZE
from memhop.engine import DATA_START, HEADER_SIZE, RECORD_HEADER_SIZE
from memhop.llm.keywords import KEYWORD_CHUNK_RUNES
from memhop.llm.local import LOCAL_MAX_KEYWORDS
from tests.docs._docs import DOCS, REPO, pages

DAY_MS = 86_400_000
# api.md and format.md are checked elsewhere; performance.md and reliability.md report
# measured figures and test set-ups (tmpfs sizes, crafted tails), not constants.
SKIPPED = {DOCS / "api.md", DOCS / "format.md", DOCS / "performance.md", DOCS / "reliability.md"}
UNIT = {
    "KiB": "KiB",
    "byte": "byte",
    "bytes": "byte",
    "day": "day",
    "days": "day",
    "row": "row",
    "rows": "row",
    "runes": "rune",
    "keywords": "keyword",
    "tokens": "token",
    "tools": "tool",
}
NUMBER_UNIT = re.compile(
    r"(?<![\w.,-])(\d{1,3}(?:,\d{3})+|\d+)[ -]("
    + "|".join(sorted(UNIT, key=len, reverse=True))
    + r")\b"
)
# For each unit, the values the code holds; a stated number must be one of them.
ALLOWED: dict[str, set[int]] = {
    "row": {
        memhop.DEFAULTS.scene_dream_topic_threshold,
        memhop.DEFAULTS.dream_compress_min_topics,
        memhop.DEFAULTS.settled_scene_floor,
    },
    "KiB": {memhop.MAX_EVENT_PAYLOAD_BYTES // 1024, memhop.MAX_UTTERANCE_PAYLOAD_BYTES // 1024},
    "byte": {
        memhop.MAX_SUB_AGENT_NAME_BYTES,
        memhop.MAX_EVENT_PAYLOAD_BYTES,
        memhop.MAX_UTTERANCE_PAYLOAD_BYTES,
        RECORD_HEADER_SIZE,
        STAMP_SIZE,
        HEADER_SIZE,
        DATA_START,
    },
    "day": {memhop.DEFAULTS.content_retention_ms // DAY_MS},
    "rune": {KEYWORD_CHUNK_RUNES},
    "keyword": {LOCAL_MAX_KEYWORDS},
    "token": {DEFAULT_MAX_OUTPUT_TOKENS},
    "tool": {len(memhop.tools.TOOLS)},
}
# The numbers the issue names: each must be stated somewhere and be the code's.
REQUIRED: dict[str, int] = {
    "24 rows": memhop.DEFAULTS.scene_dream_topic_threshold,
    "20-row floor": memhop.DEFAULTS.dream_compress_min_topics,
    "4-row floor": memhop.DEFAULTS.settled_scene_floor,
    "7 days": memhop.DEFAULTS.content_retention_ms // DAY_MS,
    "4 KiB": memhop.MAX_EVENT_PAYLOAD_BYTES // 1024,
    "64 KiB": memhop.MAX_UTTERANCE_PAYLOAD_BYTES // 1024,
    "2,000 runes": KEYWORD_CHUNK_RUNES,
    "8 keywords": LOCAL_MAX_KEYWORDS,
    "256 bytes": memhop.MAX_SUB_AGENT_NAME_BYTES,
}


def scanned() -> list[Path]:
    return [p for p in pages() if p.exists() and p not in SKIPPED]


def stated(text: str) -> list[tuple[int, str, str]]:
    """(number, unit, matched text) for every number-with-unit in ``text``."""
    out = []
    for match in NUMBER_UNIT.finditer(text):
        number = int(match.group(1).replace(",", ""))
        out.append((number, UNIT[match.group(2)], match.group(0)))
    return out


def test_the_scanner_reads_numbers_units_and_thousands() -> None:
    found = stated(
        "a 20-row floor, 2,000 runes, 7 days\nand 64 KiB; not v1.6 rows, x24 rows, depth-1 rows"
    )
    assert found == [
        (20, "row", "20-row"),
        (2000, "rune", "2,000 runes"),
        (7, "day", "7 days"),
        (64, "KiB", "64 KiB"),
    ]
    assert memhop.DEFAULTS.content_retention_ms % DAY_MS == 0  # whole days, so "7 days" is exact


@pytest.mark.parametrize("page", scanned(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_stated_number_is_the_codes(page: Path) -> None:
    wrong = [
        text
        for number, unit, text in stated(page.read_text(encoding="utf-8"))
        if number not in ALLOWED[unit]
    ]
    assert not wrong, f"{page.name} states {wrong}, which the code does not hold"


@pytest.mark.parametrize(("phrase", "value"), REQUIRED.items())
def test_the_key_numbers_are_stated_and_true(phrase: str, value: int) -> None:
    assert int(re.sub(r"\D", "", phrase.split()[0].split("-")[0])) == value
    texts = " ".join(p.read_text(encoding="utf-8").replace("\n", " ") for p in scanned())
    assert phrase in texts


def test_the_knob_defaults_quoted_in_prose_are_the_codes() -> None:
    """integration.md names the Dream threshold's default in parentheses."""
    text = (DOCS / "integration.md").read_text(encoding="utf-8").replace("\n", " ")
    quoted = re.findall(r"`scene_dream_topic_threshold` \((\d+);", text)
    assert quoted == [str(memhop.DEFAULTS.scene_dream_topic_threshold)]


def test_every_error_code_the_docs_name_is_the_codes() -> None:
    """ "`NotFoundError` 3001" and its kind: the number is the class's code."""
    pairs = [
        (name, int(code))
        for page in scanned()
        for name, code in re.findall(
            r"`(\w+Error)`,? \(?(\d{4})\b", page.read_text(encoding="utf-8").replace("\n", " ")
        )
    ]
    assert ("NotFoundError", 3001) in pairs  # integration.md's table of codes
    for name, code in pairs:
        assert memhop.code_of(getattr(memhop, name)("x")) == code, name


def test_the_timestamp_ranges_the_guide_states_are_the_ones_refused(tmp_path: Path) -> None:
    """Seconds ([1e9, 1e11)) and microseconds (> 1e14) are refused; milliseconds are not."""
    text = (DOCS / "integration.md").read_text(encoding="utf-8").replace("\n", " ")
    assert "Seconds (`[1e9, 1e11)`)" in text
    assert "microseconds (`> 1e14`)" in text
    profile = memhop.ProfileInput(name="A")
    with memhop.open(tmp_path / "t.meh", memhop.LocalModel(), profile=profile) as db:
        me = db.primary()
        me.search()
        for refused in (10**9, 10**11 - 1, 10**14 + 1):
            with pytest.raises(memhop.InvalidQueryError, match="not milliseconds"):
                me.append_archive(content="x", created_at=refused)
        for accepted in (10**9 - 1, 10**11, 10**14):
            assert me.append_archive(content="x", created_at=accepted) >= 3
