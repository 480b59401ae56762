"""``ChatModel``'s usage: its chat client's own, or zeros for a client that keeps none."""

from __future__ import annotations

from dataclasses import dataclass

from memhop.llm.remote import ChatModel
from memhop.llm.types import Usage
from tests.llm.fake_chat import FakeChat


@dataclass
class MeteredChat(FakeChat):
    """A FakeChat that counts its calls as requests."""

    def usage(self) -> Usage:
        return Usage(requests=len(self.calls))


def test_usage_is_the_clients_own_or_zeros() -> None:
    metered, plain = ChatModel(MeteredChat()), ChatModel(FakeChat())
    metered.extract_keywords("one turn")
    metered.extract_keywords("another turn")
    plain.extract_keywords("one turn")
    assert metered.usage() == Usage(requests=2)
    assert plain.usage() == Usage()
