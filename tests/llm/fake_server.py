"""An OpenAI-compatible chat endpoint on 127.0.0.1 for interface tests (real HTTP, real SDK).

``FakeOpenAI`` serves ``POST /v1/chat/completions`` from a ThreadingHTTPServer on
port 0. It tells the three call points apart by the task tag that opens each
system prompt, counts requests per call point, records what it was sent, and
answers with canned replies in upstream's JSON shapes. ``script(...)`` queues
one-off ``Step`` answers (a status, an off-contract text, finish_reason
"length", a delay); ``off_contract`` answers every call with one text.
``stop()`` shuts the server down and joins every thread it started.

Like real endpoints and models it can also: ``refuse`` a ``response_format`` type
with a status (llama.cpp answers ``json_schema`` with a 500); ``ramble``, wrapping
its JSON in prose, a code fence and trailing text unless the request was held to
a schema; ``echo_template``, answering with the example object of the system
prompt; and fill a ``context_tokens`` window like llama.cpp, cutting a reply short
(finish_reason "length") when the prompt and ``max_tokens`` do not fit.

A request that offers ``tools`` is an agent loop's, not a call point's: it is
answered from ``script_agent(...)`` (``AgentReply``: tool calls, or a final
text once the script is spent) and recorded with the point "agent".
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memhop.llm.consolidate import CONSOLIDATE_TASK
from memhop.llm.distill import DISTILL_TASK
from memhop.llm.keywords import KEYWORDS_TASK

POINTS = {KEYWORDS_TASK: "keywords", CONSOLIDATE_TASK: "consolidate", DISTILL_TASK: "distill"}
KEYWORDS_REPLY = ["咖啡", "早晨散步", "周末计划"]
SUMMARY = "The user said they walk every morning and then have coffee."
DISTILL_REPLY = {
    "emotion": {"valence": 0.8, "arousal": 0.6, "dominance": 0.5},
    "mbti": {"i_e": 0.2, "n_s": 0.3, "t_f": -0.1, "j_p": 0.4},
    "type": "ESFP",  # never read: the type is derived from the axes
    "personality": "热情、好奇，喜欢户外活动。",
    "per_node": [],
}


@dataclass
class Step:
    """One scripted answer, used by the next request instead of the canned reply."""

    status: int = 200
    content: str | None = None
    finish_reason: str | None = "stop"
    delay: float = 0.0
    body: str | None = None
    echo_auth: bool = False
    on_request: Callable[[], None] | None = None
    hang: bool = False  # never answer: wait for the client to hang up (counted) or the stop


@dataclass
class AgentReply:
    """One scripted answer to an agent loop: calls of memhop tools, or a final text."""

    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    content: str | None = None


@dataclass
class Seen:
    point: str
    body: dict[str, Any]
    authorization: str

    @property
    def system(self) -> str:
        return str(self.body["messages"][0]["content"])

    @property
    def user(self) -> str:
        return str(self.body["messages"][1]["content"])


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    steps: list[Step] = field(default_factory=list)
    agent_replies: list[AgentReply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    off_contract: str | None = None
    minimal: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    refuse: dict[str, int] = field(default_factory=dict)
    ramble: bool = False
    echo_template: bool = False
    context_tokens: int = 0
    hangups: int = 0


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins every handler thread
    block_on_close = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is not a server failure


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/chat/completions":
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
            return
        body = json.loads(raw)
        if "tools" in body:
            self._agent(body)
            return
        system = str(body["messages"][0]["content"])
        point = next((name for tag, name in POINTS.items() if f"Task: {tag}." in system), "")
        with state.lock:
            state.seen.append(Seen(point, body, self.headers.get("Authorization", "")))
            step = state.steps.pop(0) if state.steps else Step()
            off_contract = state.off_contract
            if not point:
                state.errors.append(f"unknown call point: {system[:80]!r}")
        if step.on_request is not None:
            step.on_request()
        if step.delay and state.stop.wait(step.delay):
            return
        if step.hang:
            if self._await_hangup():
                with state.lock:
                    state.hangups += 1
            return
        if not point:
            self._send(500, '{"error": {"message": "unknown call point"}}')
        elif step.status != 200:
            text = step.body or json.dumps({"error": {"message": f"status {step.status}"}})
            if step.echo_auth:
                text = json.dumps({"error": {"message": f"bad {self.headers['Authorization']}"}})
            self._send(step.status, text)
        elif _format_type(body) in state.refuse:
            message = f"response_format type {_format_type(body)} is not supported"
            self._send(
                state.refuse[_format_type(body)], json.dumps({"error": {"message": message}})
            )
        else:
            content = step.content or off_contract or _modelled(state, point, body)
            finish, produced = _fit(state, body, step.finish_reason)
            reply = _completion(content, finish, state.minimal, produced)
            self._send(200, json.dumps(reply))

    def _await_hangup(self) -> bool:
        """Wait until the client closes its end (True) or the server stops (False)."""
        while not self.server.state.stop.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.02)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                except OSError:
                    return True
        return False

    def _agent(self, body: dict[str, Any]) -> None:
        state = self.server.state
        with state.lock:
            state.seen.append(Seen("agent", body, self.headers.get("Authorization", "")))
            reply = state.agent_replies.pop(0) if state.agent_replies else AgentReply()
        self._send(200, json.dumps(_agent_completion(reply, len(state.seen))))

    def _send(self, status: int, text: str) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _canned(point: str, body: dict[str, Any]) -> str:
    if point == "keywords":
        return json.dumps({"keywords": KEYWORDS_REPLY}, ensure_ascii=False)
    if point == "consolidate":
        ids = re.findall(r"id=(\d+)", str(body["messages"][1]["content"]))
        if len(ids) < 2:
            return '{"l2_groups": []}'
        group = {"node_hashes": [int(i) for i in ids[:2]], "merged_summary": SUMMARY}
        return json.dumps({"l2_groups": [group]})
    return json.dumps(DISTILL_REPLY, ensure_ascii=False)


def _format_type(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format")
    return str(fmt.get("type")) if isinstance(fmt, dict) else None


def _modelled(state: _State, point: str, body: dict[str, Any]) -> str:
    """The canned reply as the configured model would word it."""
    if state.echo_template:
        system = str(body["messages"][0]["content"])
        return system[system.index("{") : system.rindex("}") + 1]
    content = _canned(point, body)
    if state.ramble and _format_type(body) not in ("json_schema", "json_object"):
        return f"Sure! Here is the JSON:\n```json\n{content}\n```\n{content}\nAnything else?"
    return content


def _fit(state: _State, body: dict[str, Any], finish: str | None) -> tuple[str | None, int]:
    """Finish reason and completion tokens: a reply fills the context it is not fitted to."""
    if finish == "length":  # a scripted cut: the model spent its whole budget
        return finish, int(body["max_tokens"])
    if not state.context_tokens:
        return finish, 7
    words = sum(len(str(m["content"]).encode("utf-8")) for m in body["messages"])
    room = state.context_tokens - (words // 4 + 8)
    if int(body["max_tokens"]) > room:
        return "length", max(room, 0)
    return finish, 7


def _completion(
    content: str, finish_reason: str | None, minimal: bool, produced: int = 7
) -> dict[str, Any]:
    if minimal:  # upstream's mock shape: choices only
        return {"choices": [{"message": {"content": content}}]}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": 11,
            "completion_tokens": produced,
            "total_tokens": 11 + produced,
        },
    }


def _agent_completion(reply: AgentReply, serial: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{serial}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
        }
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if calls:
        message["tool_calls"] = calls
    elif reply.content is None:
        message["content"] = "Done."
    done = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
    return {**_completion("", "stop", minimal=False), "choices": [done]}


class FakeOpenAI:
    """The fake endpoint; ``start()`` before use, ``stop()`` always (the fixture does both)."""

    def __init__(self) -> None:
        self._state = _State()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.state = self._state
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="fake-openai", daemon=True
        )

    @property
    def api_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1/chat/completions"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stop.set()  # wakes slow handlers
        self._httpd.shutdown()
        self._httpd.server_close()  # joins handler threads
        self._thread.join(timeout=5)

    def script(self, *steps: Step) -> None:
        with self._state.lock:
            self._state.steps.extend(steps)

    def script_agent(self, *replies: AgentReply) -> None:
        """Queue answers for requests that offer tools (an agent loop), in order."""
        with self._state.lock:
            self._state.agent_replies.extend(replies)

    @property
    def off_contract(self) -> str | None:
        return self._state.off_contract

    @off_contract.setter
    def off_contract(self, text: str | None) -> None:
        with self._state.lock:
            self._state.off_contract = text

    @property
    def minimal(self) -> bool:
        return self._state.minimal

    @minimal.setter
    def minimal(self, value: bool) -> None:
        self._state.minimal = value

    def configure(
        self,
        *,
        refuse: dict[str, int] | None = None,
        ramble: bool | None = None,
        echo_template: bool | None = None,
        context_tokens: int | None = None,
    ) -> None:
        """Model a real endpoint (see the module); unnamed settings are left as they are."""
        with self._state.lock:
            if refuse is not None:
                self._state.refuse = dict(refuse)
            if ramble is not None:
                self._state.ramble = ramble
            if echo_template is not None:
                self._state.echo_template = echo_template
            if context_tokens is not None:
                self._state.context_tokens = context_tokens

    @property
    def hangups(self) -> int:
        """How many ``hang`` requests the client closed before the server stopped."""
        with self._state.lock:
            return self._state.hangups

    def formats(self, point: str | None = None) -> list[str | None]:
        """The ``response_format`` type of each request, in order (None: none sent)."""
        return [_format_type(s.body) for s in self.seen if point is None or s.point == point]

    @property
    def seen(self) -> list[Seen]:
        with self._state.lock:
            return list(self._state.seen)

    @property
    def errors(self) -> list[str]:
        with self._state.lock:
            return list(self._state.errors)

    def count(self, point: str | None = None) -> int:
        return sum(1 for s in self.seen if point is None or s.point == point)

    def budgets(self, point: str | None = None) -> list[int]:
        """The ``max_tokens`` of each request, in order."""
        return [int(s.body["max_tokens"]) for s in self.seen if point is None or s.point == point]
