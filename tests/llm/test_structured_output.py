"""Structured output, tolerant reading and budgets that fit, against the fake endpoint over HTTP."""

from __future__ import annotations

import pytest

from memhop.config import LlmConfig
from memhop.errors import ConfigError, LLMError
from memhop.llm import Group, NodeDigest, TopicDigest, Usage
from memhop.llm.openai_client import OpenAIChat
from memhop.llm.remote import ChatModel
from tests.llm.conftest import SECRET
from tests.llm.fake_server import KEYWORDS_REPLY, SUMMARY, FakeOpenAI, Step

TOPICS = [TopicDigest(101, 1, ("run",)), TopicDigest(202, 1, ("park",)), TopicDigest(303, 1, ())]
SAMPLES = [NodeDigest(0xAB, 0.5, ("hiking",))]
LLAMA_CPP_REFUSAL = 500  # llama-cpp-python answers a json_schema request with a 500


def _chat(server: FakeOpenAI, mode: str = "auto", context_tokens: int = 0) -> OpenAIChat:
    config = LlmConfig(
        api_url=server.api_url,
        api_key=SECRET,
        model="fake-model",
        timeout_secs=5,
        structured_output=mode,
        context_tokens=context_tokens,
    )
    return OpenAIChat(config, delays=(0, 0))


def test_auto_sends_the_replys_schema_strictly_and_asks_once(fake_openai: FakeOpenAI) -> None:
    with _chat(fake_openai) as chat:
        model = ChatModel(chat)
        assert model.extract_keywords("text") == tuple(KEYWORDS_REPLY)
        assert model.consolidate(TOPICS, 2) == (Group((101, 202), SUMMARY),)
        assert chat.structured_output == "json_schema"
        assert chat.usage().requests == 2  # one request per operation
    keywords, groups = (s.body["response_format"] for s in fake_openai.seen)
    assert keywords["json_schema"]["strict"] is True
    assert keywords["json_schema"]["schema"]["required"] == ["keywords"]
    runs = groups["json_schema"]["schema"]["properties"]["l2_groups"]["items"]["anyOf"]
    assert [r["properties"]["node_hashes"]["enum"] for r in runs] == [
        [["101", "202"]],
        [["101", "202", "303"]],
        [["202", "303"]],
    ]


def test_auto_steps_down_once_and_remembers_what_the_endpoint_took(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.configure(refuse={"json_schema": LLAMA_CPP_REFUSAL})
    with _chat(fake_openai) as chat:
        model = ChatModel(chat)
        assert model.extract_keywords("one") == tuple(KEYWORDS_REPLY)
        assert model.extract_keywords("two") == tuple(KEYWORDS_REPLY)
        assert model.distill(SAMPLES).valence == 0.8
        assert chat.structured_output == "json_object"
        assert chat.usage() == Usage(requests=4, failures=1, prompt_tokens=33, completion_tokens=21)
    assert fake_openai.formats() == ["json_schema", "json_object", "json_object", "json_object"]
    assert "schema" in fake_openai.seen[1].body["response_format"]  # llama.cpp's grammar


def test_an_endpoint_that_takes_no_format_gets_plain_prompts_and_rambles_are_read(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.configure(refuse={"json_schema": 400, "json_object": 400}, ramble=True)
    with _chat(fake_openai) as chat:
        model = ChatModel(chat)
        # The reply wraps its JSON in prose and a fence and repeats it after ("Extra data").
        assert model.extract_keywords("one") == tuple(KEYWORDS_REPLY)
        assert model.consolidate(TOPICS, 2) == (Group((101, 202), SUMMARY),)
        assert chat.structured_output == "off"
    assert fake_openai.formats() == ["json_schema", "json_object", None, None]


def test_a_step_down_is_remembered_only_once_the_endpoint_answered(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.configure(refuse={"json_schema": LLAMA_CPP_REFUSAL})
    fake_openai.script(Step(), *[Step(status=503)] * 3)  # the schema refusal, then an outage
    with _chat(fake_openai) as chat:
        with pytest.raises(LLMError, match="503"):
            ChatModel(chat).extract_keywords("one")
        assert chat.structured_output == "json_schema"  # the outage taught nothing
        assert ChatModel(chat).extract_keywords("two") == tuple(KEYWORDS_REPLY)
        assert chat.structured_output == "json_object"
    first_call = ["json_schema", "json_object", "json_object", "json_object"]
    assert fake_openai.formats() == [*first_call, "json_schema", "json_object"]


def test_a_forced_mode_never_steps_down_and_names_the_setting(fake_openai: FakeOpenAI) -> None:
    fake_openai.configure(refuse={"json_schema": LLAMA_CPP_REFUSAL})
    with _chat(fake_openai, "json_schema") as chat, pytest.raises(LLMError) as info:
        ChatModel(chat).extract_keywords("text")
    assert "structured_output='json_schema'" in str(info.value)
    assert fake_openai.formats() == ["json_schema"]
    with _chat(fake_openai, "json_object") as chat:  # positive control: a mode it takes
        assert ChatModel(chat).extract_keywords("text") == tuple(KEYWORDS_REPLY)


def test_off_sends_no_response_format(fake_openai: FakeOpenAI) -> None:
    with _chat(fake_openai, "off") as chat:
        assert ChatModel(chat).extract_keywords("text") == tuple(KEYWORDS_REPLY)
    assert fake_openai.formats() == [None]


def test_an_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="structured_output"):
        LlmConfig("http://127.0.0.1:9/v1", SECRET, "m", structured_output="grammar").validate()
    bad = LlmConfig("http://127.0.0.1:9/v1", SECRET, "m", context_tokens="4k")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="context_tokens"):
        bad.validate()
    LlmConfig("http://127.0.0.1:9/v1", SECRET, "m", structured_output="off").validate()


def test_an_echoed_template_is_never_stored(fake_openai: FakeOpenAI) -> None:
    fake_openai.configure(echo_template=True)
    with _chat(fake_openai, "off") as chat:
        model = ChatModel(chat)
        with pytest.raises(LLMError, match="placeholder"):
            model.extract_keywords("text")
        with pytest.raises(LLMError):
            model.consolidate(TOPICS, 2)
        fake_openai.configure(echo_template=False)
        assert model.extract_keywords("text") == tuple(KEYWORDS_REPLY)  # positive control
    assert fake_openai.count("keywords") == 3  # one format retry each time it echoed


def test_a_context_wall_is_named_and_not_climbed(fake_openai: FakeOpenAI) -> None:
    fake_openai.configure(context_tokens=1024)
    with _chat(fake_openai) as chat, pytest.raises(LLMError, match="context ran out") as info:
        ChatModel(chat).consolidate(TOPICS, 2)
    assert "max_tokens=8192" in str(info.value)  # what was asked, and why it did not help
    assert fake_openai.budgets("consolidate") == [8192]


def test_context_tokens_fits_every_request_beside_its_prompt(fake_openai: FakeOpenAI) -> None:
    fake_openai.configure(context_tokens=1024)
    with _chat(fake_openai, context_tokens=1024) as chat:
        model = ChatModel(chat)
        assert model.consolidate(TOPICS, 2) == (Group((101, 202), SUMMARY),)
        assert model.extract_keywords("text") == tuple(KEYWORDS_REPLY)
        assert model.distill(SAMPLES).valence == 0.8
    budgets = fake_openai.budgets()
    assert len(budgets) == 3
    assert all(0 < b < 1024 for b in budgets)
