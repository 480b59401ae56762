"""A domain's model meter (``MeteredModel``): what it asks the model around each call."""

from __future__ import annotations

import threading

from memhop.domain.context import MeteredModel
from memhop.llm import LocalModel, Usage


class _Spending(LocalModel):
    """The offline model made to report requests and tokens, as a client does."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0
        self.spent = Usage()

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        self.spent = self.spent + Usage(operations=1, requests=2, prompt_tokens=10)
        return super().extract_keywords(text, cancel=cancel)

    def usage(self) -> Usage:
        self.asked += 1
        return self.spent


def test_the_offline_model_is_not_asked_what_it_spent_but_a_reporting_one_is() -> None:
    """``LocalModel`` spends no requests or tokens, so the meter counts its calls itself and
    asks it nothing; a model that reports what it spends (here a subclass of it) is asked
    around each call and its requests and tokens reach the meter (the control: the same
    calls, the asking path taken)."""
    offline = LocalModel()
    asked: list[int] = []
    offline.usage = lambda: asked.append(1) or Usage()  # type: ignore[method-assign]
    meter = MeteredModel(offline)
    for text in ("the harbour at dawn", "a lighthouse keeper", "tide tables"):
        assert meter.extract_keywords(text)
    assert (meter.usage().operations, meter.usage().requests, asked) == (3, 0, [])

    spending = _Spending()
    counted = MeteredModel(spending)
    for text in ("the harbour at dawn", "a lighthouse keeper", "tide tables"):
        assert counted.extract_keywords(text)
    used = counted.usage()
    assert (used.operations, used.requests, used.prompt_tokens) == (3, 6, 30)
    assert spending.asked == 6  # before and after each call
