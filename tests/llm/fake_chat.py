"""``FakeChat``: a scripted ``ChatClient`` for unit tests of the call points (no network)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from memhop.llm.chat import ReplySchema

Answer = str | BaseException | Callable[[str, str, int], str]


@dataclass
class Call:
    system: str
    user: str
    max_tokens: int
    schema: ReplySchema | None = None


@dataclass
class FakeChat:
    """Answers come from ``answers`` in order, then ``default``; an exception is raised."""

    answers: list[Answer] = field(default_factory=list)
    default: Answer = '{"keywords": ["default"]}'
    max_output_tokens: int = 8192
    context_tokens: int = 0
    calls: list[Call] = field(default_factory=list)

    def chat(
        self,
        system: str,
        user: str,
        max_tokens: int,
        *,
        schema: ReplySchema | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        self.calls.append(Call(system, user, max_tokens, schema))
        answer = self.answers.pop(0) if self.answers else self.default
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(system, user, max_tokens)
        return answer

    @property
    def budgets(self) -> list[int]:
        return [call.max_tokens for call in self.calls]
