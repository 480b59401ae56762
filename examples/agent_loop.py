"""An agent that keeps its own memory: an OpenAI-compatible model driving memhop's tool table.

    LLM_URL=https://api.openai.com/v1 LLM_KEY=sk-... LLM_MODEL=gpt-4o-mini \\
        python examples/agent_loop.py --memory agent.meh "What did I say about Lisbon?"

Each run is one turn of a conversation that remembers earlier runs. The model
is offered ``memhop.tools.schemas()`` (strict function definitions) and every
tool call it makes runs through ``memhop.tools.dispatch``; the results go back
to it as compact JSON. The host owns the clock: the model never sends
``created_at``. If the model answers without closing the turn, the host closes
it, so no turn is left open. memhop's own model calls (the keywords of a
closed turn) go to the same endpoint. The tests run this file against an
offline fake endpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import openai

import memhop
from memhop import tools

SYSTEM = """You are an assistant with a long-term memory, reached through tools.
For every user message:
1. Call memory_search first: it opens this turn and shows the current conversation.
2. When the user refers to something earlier, call memory_recall with a few words.
3. Call memory_record for each fact worth keeping (kind "event" for tool results).
4. Before your final answer, call memory_close_turn with the user's message as input
   and your answer as output.
Then answer the user in plain text."""

MAX_ROUNDS = 12  # model requests per turn; a model that loops longer is stopped


def _endpoint() -> memhop.LlmConfig:
    values = {
        name: os.environ.get(name, "").strip() for name in ("LLM_URL", "LLM_KEY", "LLM_MODEL")
    }
    missing = [name for name, value in values.items() if not value]
    if missing:
        msg = f"set LLM_URL, LLM_KEY and LLM_MODEL (missing: {', '.join(missing)})"
        raise SystemExit(msg)
    return memhop.LlmConfig(
        api_url=values["LLM_URL"], api_key=values["LLM_KEY"], model=values["LLM_MODEL"]
    )


def run_turn(
    client: openai.OpenAI, model: str, session: memhop.Session, user_text: str
) -> tuple[str, list[str]]:
    """One user message through the model and the tools; return the answer and the calls."""
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_text},
    ]
    called: list[str] = []
    for _ in range(MAX_ROUNDS):
        reply = client.chat.completions.create(
            model=model, messages=messages, tools=tools.schemas(), temperature=0
        )
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or "", called
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            if call.type != "function":
                continue
            result = tools.dispatch(session, call.function.name, call.function.arguments)
            text = tools.encode(result)
            called.append(call.function.name)
            print(f"  tool {call.function.name}: {text[:160]}")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    return "(the model did not finish within the round limit)", called


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message", help="what the user says this turn")
    parser.add_argument("--memory", default="agent.meh", help="the .meh file (created if missing)")
    args = parser.parse_args()
    endpoint = _endpoint()
    client = openai.OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key)
    profile = memhop.ProfileInput(name="assistant", role="a helpful assistant")
    with memhop.open(args.memory, endpoint, profile=profile) as db:
        session = db.primary()
        answer, called = run_turn(client, endpoint.model, session, args.message)
        if "memory_close_turn" not in called:  # the host keeps the turn whatever the model did
            if "memory_search" not in called:
                session.search()
            closed = tools.dispatch(
                session, "memory_close_turn", {"input": args.message, "output": answer}
            )
            if "error" in closed:
                print(f"memory: the turn was not kept: {closed['error']['message']}")
    client.close()
    print(f"assistant: {answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
