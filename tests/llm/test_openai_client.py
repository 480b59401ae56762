"""Interface tests: the real ``openai`` client against a fake endpoint over real HTTP."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

import pytest

from memhop.config import LlmConfig
from memhop.errors import Code, ConfigError, LLMError, OperationCancelledError, code_of
from memhop.llm import Group, Model, NodeDigest, TopicDigest, Usage
from memhop.llm.chat import TruncationError
from memhop.llm.consolidate import CONSOLIDATE_FORMAT_SUFFIX
from memhop.llm.openai_client import OpenAIChat
from memhop.llm.remote import ChatModel, OpenAIModel
from tests.llm.conftest import SECRET
from tests.llm.fake_server import KEYWORDS_REPLY, SUMMARY, FakeOpenAI, Step

MakeChat = Callable[..., OpenAIChat]
TOPICS = [TopicDigest(101, 1, ("run",)), TopicDigest(202, 1, ("park",)), TopicDigest(303, 1, ())]
SAMPLES = [NodeDigest(0xAB, 0.5, ("hiking",))]


def _chain(exc: BaseException | None) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and len(out) < 20:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def test_the_request_has_upstreams_shape(fake_openai: FakeOpenAI, make_chat: MakeChat) -> None:
    model = ChatModel(make_chat())
    assert model.extract_keywords("User: I walk every morning") == tuple(KEYWORDS_REPLY)
    (seen,) = fake_openai.seen
    assert seen.authorization == f"Bearer {SECRET}"
    body = seen.body
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert body["top_p"] == 1
    assert body["max_tokens"] == 512
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["response_format"]["type"] == "json_schema"  # "auto" starts at the strongest
    assert "tools" not in body
    assert not body.get("stream")
    assert seen.user.endswith("\nUser: I walk every morning")


def test_the_three_call_points_in_upstreams_json_shapes(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    model = ChatModel(make_chat())
    assert isinstance(model, Model)
    assert model.consolidate(TOPICS, 2) == (Group((101, 202), SUMMARY),)
    got = model.distill(SAMPLES)
    assert (got.valence, got.arousal, got.dominance) == (0.8, 0.6, 0.5)
    assert (got.i_e, got.n_s, got.t_f, got.j_p) == (0.2, 0.3, -0.1, 0.4)
    assert got.personality
    assert got.per_node == ()
    assert model.extract_keywords("text") == tuple(KEYWORDS_REPLY)
    counts = [fake_openai.count(p) for p in ("keywords", "consolidate", "distill")]
    assert counts == [1, 1, 1]
    assert fake_openai.budgets("consolidate") == [8192]
    assert fake_openai.budgets("distill") == [2048]


def test_upstreams_minimal_reply_shape_is_accepted(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.minimal = True  # choices only: no finish_reason, no usage
    chat = make_chat()
    assert ChatModel(chat).extract_keywords("text") == tuple(KEYWORDS_REPLY)
    assert chat.usage() == Usage(requests=1)


def test_an_off_contract_reply_gets_one_format_retry(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(content="Sure! I would merge the first two topics."))
    assert ChatModel(make_chat()).consolidate(TOPICS, 2) == (Group((101, 202), SUMMARY),)
    first, retry = fake_openai.seen
    assert retry.user == first.user + CONSOLIDATE_FORMAT_SUFFIX


def test_an_always_off_contract_model_is_an_llm_error(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.off_contract = "no JSON today"
    model = ChatModel(make_chat())
    with pytest.raises(LLMError):
        model.distill(SAMPLES)
    with pytest.raises(LLMError, match="off contract"):
        model.extract_keywords("text")
    assert fake_openai.count("distill") == 2
    assert fake_openai.budgets("keywords") == [512, 512]  # one format retry, no climb


def test_429_then_success_is_retried_and_counted(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(status=429))
    chat = make_chat()
    assert ChatModel(chat).extract_keywords("text") == tuple(KEYWORDS_REPLY)
    assert fake_openai.count() == 2
    assert chat.usage() == Usage(requests=2, prompt_tokens=11, completion_tokens=7, failures=1)


def test_three_500s_are_an_llm_error_naming_the_status(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(*[Step(status=500, body="upstream exploded")] * 3)
    chat = make_chat()
    with pytest.raises(LLMError, match=r"^llm api: 500 - upstream exploded$") as info:
        chat.chat("Task: keyword-extraction.", "u", 64)
    assert code_of(info.value) == Code.LLM
    assert fake_openai.count() == 3
    assert chat.usage() == Usage(requests=3, failures=3)


def test_the_real_backoff_waits_are_taken(fake_openai: FakeOpenAI, make_chat: MakeChat) -> None:
    fake_openai.script(Step(status=503), Step(status=502))
    chat = make_chat(delays=(0.05, 0.1))
    started = time.monotonic()
    chat.chat("Task: keyword-extraction.", "u", 64)
    assert time.monotonic() - started >= 0.15
    assert fake_openai.count() == 3


def test_a_400_is_not_retried_nor_escalated(fake_openai: FakeOpenAI, make_chat: MakeChat) -> None:
    fake_openai.script(Step(status=400, body='{"error": {"message": "bad max_tokens"}}'))
    with pytest.raises(LLMError, match=r"llm api: 400 - .*bad max_tokens"):
        ChatModel(make_chat()).consolidate(TOPICS, 2)
    assert fake_openai.count() == 1


def test_a_slow_endpoint_costs_one_timeout_window(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(delay=5))
    chat = make_chat(timeout_secs=1)
    started = time.monotonic()
    with pytest.raises(LLMError, match="llm api call failed") as info:
        chat.chat("Task: keyword-extraction.", "u", 64)
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3
    assert not isinstance(info.value, OperationCancelledError)
    assert fake_openai.count() == 1


def test_an_unreachable_endpoint_is_not_retried() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = LlmConfig(f"http://127.0.0.1:{port}", SECRET, "m", timeout_secs=2)
    with OpenAIChat(config, delays=(5, 5)) as chat:
        started = time.monotonic()
        with pytest.raises(LLMError, match="llm api call failed"):
            chat.chat("s", "u", 64)
        assert time.monotonic() - started < 2  # no backoff wait was taken
        assert chat.usage() == Usage(requests=1, failures=1)


def test_finish_reason_length_climbs_the_keyword_ladder(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(finish_reason="length"))
    chat = make_chat()
    assert ChatModel(chat).extract_keywords("text") == tuple(KEYWORDS_REPLY)
    assert fake_openai.budgets("keywords") == [512, 4096]
    assert chat.usage().failures == 1


def test_truncation_escalates_to_the_configured_ceiling(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(finish_reason="length"))
    ChatModel(make_chat(max_output_tokens=16384)).consolidate(TOPICS, 2)
    assert fake_openai.budgets("consolidate") == [8192, 16384]


def test_a_truncated_answer_carries_the_llm_code_and_its_budget(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(finish_reason="length"))
    with pytest.raises(LLMError, match="max_tokens=777") as info:
        make_chat().chat("Task: keyword-extraction.", "u", 777)
    assert isinstance(info.value, TruncationError)
    assert code_of(info.value) == Code.LLM
    assert fake_openai.budgets() == [777]


def test_a_cancelled_call_never_reaches_the_endpoint(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(OperationCancelledError) as info:
        ChatModel(make_chat()).extract_keywords("text", cancel=cancel)
    assert code_of(info.value) == Code.CANCELLED
    assert fake_openai.count() == 0


def test_a_call_cancelled_during_the_backoff_stops_waiting(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    cancel = threading.Event()
    fake_openai.script(Step(status=503, on_request=cancel.set))
    chat = make_chat(delays=(30, 30))
    started = time.monotonic()
    with pytest.raises(OperationCancelledError) as info:
        chat.chat("Task: keyword-extraction.", "u", 64, cancel=cancel)
    assert time.monotonic() - started < 5
    assert fake_openai.count() == 1
    assert any("503" in str(e) for e in _chain(info.value))


def test_a_call_cancelled_while_on_the_wire_reports_cancelled(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    cancel = threading.Event()
    fake_openai.script(Step(status=429, on_request=cancel.set))
    with pytest.raises(OperationCancelledError):
        make_chat(delays=(0, 0)).chat("Task: keyword-extraction.", "u", 64, cancel=cancel)
    assert fake_openai.count() == 1


def test_usage_accumulates_tokens_calls_and_failures(
    fake_openai: FakeOpenAI, make_chat: MakeChat
) -> None:
    fake_openai.script(Step(status=400))
    chat = make_chat()
    model = ChatModel(chat)
    with pytest.raises(LLMError):
        model.extract_keywords("a")
    model.extract_keywords("b")
    model.distill(SAMPLES)
    assert model.usage() == Usage(requests=3, prompt_tokens=22, completion_tokens=14, failures=1)


def test_the_api_key_never_leaks(
    fake_openai: FakeOpenAI, make_chat: MakeChat, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_openai.script(
        Step(status=401, echo_auth=True),
        Step(status=500, echo_auth=True),
        *[Step(status=500, echo_auth=True)] * 2,
    )
    chat = make_chat()
    model = ChatModel(chat)
    failures = []
    for _ in range(2):
        with pytest.raises(LLMError) as info:
            model.extract_keywords("text")
        failures.append(info.value)
    assert fake_openai.seen[0].authorization == f"Bearer {SECRET}"  # the key was sent...
    assert "[redacted]" in str(failures[0])  # ...and echoed back, then redacted
    for failure in failures:
        for exc in _chain(failure):
            assert SECRET not in str(exc)
            assert SECRET not in repr(exc)
            assert SECRET not in "".join(str(a) for a in exc.args)
    assert caplog.records, "the positive control: something was logged"
    assert SECRET not in caplog.text
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    assert SECRET not in repr(chat)
    assert SECRET not in repr(model)
    assert SECRET not in repr(LlmConfig(fake_openai.api_url, SECRET, "m"))


def test_openai_model_validates_then_serves_the_protocol(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(ConfigError):
        OpenAIModel(LlmConfig(fake_openai.api_url, "", "m"))
    base = fake_openai.api_url.removesuffix("/v1/chat/completions")
    model = OpenAIModel(LlmConfig(base, SECRET, "fake-model", timeout_secs=5))
    try:
        assert isinstance(model, Model)
        assert model.extract_keywords("text") == tuple(KEYWORDS_REPLY)
        assert model.usage().requests == 1
        assert SECRET not in repr(model)
    finally:
        model.close()
