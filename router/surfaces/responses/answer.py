"""OpenAI Responses' answer (`POST /v1/responses`, what Codex CLI speaks): a chat step's answer,
plain or streamed, becomes output items (its reasoning, messages, a refusal, function calls) with
`response.*` events and a final usage; errors take the Responses shape (request.py turns input
items into chat messages)."""

from __future__ import annotations

import time
from typing import Any

import orjson

from router.protocol.completion_shape import reasoning_text, reasoning_tokens
from router.protocol.sse import ChunkTranslator
from router.protocol.upstream_error import OVERFLOW_CODE, is_overflow, openai_error_body
from router.protocol.usage import Usage
from router.surfaces.responses.ids import call_id, item_id, new_response_id
from router.surfaces.responses.request import text_format
from router.surfaces.responses.tools import ChatTools, answer_tools, output_item


def _usage(usage: Any) -> dict[str, Any]:
    counts = Usage.from_openai(usage) or Usage(0, 0, 0)
    prompt, completion = counts.prompt_tokens, counts.completion_tokens
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
        "input_tokens_details": {"cached_tokens": counts.cached_tokens},
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens(usage)},
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


def _refusal_part(text: str) -> dict[str, Any]:
    return {"type": "refusal", "refusal": text}


def _message_item(item_id: str, part: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [part]}


def _reasoning_item(item_id: str, text: str) -> dict[str, Any]:
    """A chat answer's reasoning as a reasoning item: its whole text as the summary, what Codex
    shows and what a client sends back (request.py reads it into `reasoning_content` again)."""
    return {"type": "reasoning", "id": item_id, "status": "completed", "summary": [_summary_part(text)]}


def _summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


# A chat answer cut short, as the Responses API reports it: `status: "incomplete"` and the
# reason (`response.incomplete` ends its stream), not a completed answer a client would act on.
INCOMPLETE_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _ended(response: dict[str, Any], finish_reason: Any) -> dict[str, Any]:
    """`response` (completed) as incomplete where the chat answer's finish reason says so."""
    reason = INCOMPLETE_REASONS.get(finish_reason) if isinstance(finish_reason, str) else None
    if reason is not None:
        response["status"] = "incomplete"
        response["incomplete_details"] = {"reason": reason}
    return response


def _response(
    response_id: str,
    model: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    status: str = "completed",
    text_format: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "text": {"format": text_format or {"type": "text"}},
    }


def _output(message: dict[str, Any], response_id: str, tools: ChatTools | None) -> list[dict[str, Any]]:
    """A chat answer's message as output items: its reasoning, its text, its refusal (a message
    of a refusal part, as OpenAI gives one), then its tool calls."""
    output: list[dict[str, Any]] = []
    reasoning = reasoning_text(message)
    if reasoning:
        output.append(_reasoning_item(item_id("rs", response_id, 0), reasoning))
    for key, part in (("content", _text_part), ("refusal", _refusal_part)):
        if isinstance(message.get(key), str) and message[key]:
            output.append(_message_item(item_id("msg", response_id, len(output)), part(message[key])))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name, arguments = function.get("name", ""), function.get("arguments") or ""
        output.append(output_item(response_id, len(output), call_id(call.get("id")), name, arguments, tools))
    return output


def from_chat(answer: dict[str, Any], chat: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion as a Responses answer (`chat`: the body it answers, whose
    `response_format` the answer's `text.format` echoes)."""
    choice = (answer.get("choices") or [{}])[0]
    response_id = new_response_id()
    output = _output(choice.get("message") or {}, response_id, answer_tools(chat))
    usage = _usage(answer.get("usage"))
    response = _response(response_id, answer.get("model", ""), output, usage, text_format=text_format(chat))
    return _ended(response, choice.get("finish_reason"))


# What the stream's open text-like item is (StreamTranslator._open): its kind of content and the
# events of its text. A reasoning's text is its summary's one part; a message's, its one content
# part (output text, or a refusal).
_TEXT_EVENTS = {
    "text": ("response.output_text.delta", "response.output_text.done", "text"),
    "refusal": ("response.refusal.delta", "response.refusal.done", "refusal"),
    "reasoning": ("response.reasoning_summary_text.delta", "response.reasoning_summary_text.done", "text"),
}


class StreamTranslator(ChunkTranslator):
    """Chat-completion SSE chunks in, `response.*` events out, in the order and with the fields a
    real OpenAI stream has: the openai SDK's stream helper builds its snapshot from them
    (`content_part.added` before any text delta, each item's `output_index`, `item_id`), and
    Codex needs `output_item.done` per item and `response.completed` with usage
    (`response.incomplete` for an answer cut short)."""

    def __init__(self, text_format: dict[str, Any] | None = None, tools: ChatTools | None = None) -> None:
        super().__init__()
        self._tools = tools  # what each chat tool name stands for (tools.answer_tools)
        self._sequence = 0
        self._started = False
        self._id = new_response_id()
        self._model = ""
        self._text_format = text_format
        self._text: list[str] = []  # the open reasoning's, text's or refusal's text so far
        self._calls: dict[int, dict[str, Any]] = {}
        self._items: list[dict[str, Any]] = []
        self._usage: dict[str, Any] | None = None
        self._open: str | None = None  # "reasoning", "text", "refusal" or "call:<index>"
        # Chat indexes of the calls first seen while another call's item is open, in the order
        # they came (their id, name and arguments are in `_calls`). An upstream may interleave
        # its calls' deltas (index 1, then 0 again); an item once done takes no more arguments
        # (the openai SDK refuses a changed one), so these are sent whole, after the open one.
        self._held: list[int] = []
        self._finish: Any = None  # the chat answer's finish reason
        self._item_id = ""

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        number = self._sequence
        self._sequence += 1
        return (
            b"event: "
            + kind.encode()
            + b"\ndata: "
            + orjson.dumps({"type": kind, "sequence_number": number, **data})
            + b"\n\n"
        )

    def _response(self, output: list[dict[str, Any]], status: str) -> dict[str, Any]:
        usage = self._usage if status == "completed" else None
        return _response(self._id, self._model, output, usage, status, self._text_format)

    def _start(self, chunk: dict[str, Any]) -> list[bytes]:
        self._started = True
        self._model = chunk.get("model", "")
        return [
            self._event("response.created", {"response": self._response([], "in_progress")}),
            self._event("response.in_progress", {"response": self._response([], "in_progress")}),
        ]

    def _where(self) -> dict[str, Any]:
        return {"item_id": self._item_id, "output_index": len(self._items)}

    def _part_where(self) -> dict[str, Any]:
        """Where the open item's one part is: a message's content part, a reasoning's summary part."""
        index = "summary_index" if self._open == "reasoning" else "content_index"
        return {**self._where(), index: 0}

    def _close(self) -> list[bytes]:
        if self._open in _TEXT_EVENTS:
            out = self._close_text()
        elif self._open is not None:
            out = self._close_call(int(self._open.removeprefix("call:")))
        else:
            out = []
        self._open = None
        return out

    def _close_text(self) -> list[bytes]:
        """The open reasoning or message done: its text, its part, the item."""
        assert self._open is not None
        text, self._text = "".join(self._text), []
        _, done, key = _TEXT_EVENTS[self._open]
        where = self._part_where()
        extra: dict[str, Any] = {"logprobs": []} if self._open == "text" else {}
        out = [self._event(done, {**where, key: text, **extra})]
        if self._open == "reasoning":
            item = _reasoning_item(self._item_id, text)
            part = item["summary"][0]
            out.append(self._event("response.reasoning_summary_part.done", {**where, "part": part}))
        else:
            item = _message_item(self._item_id, (_text_part if self._open == "text" else _refusal_part)(text))
            part = item["content"][0]
            out.append(self._event("response.content_part.done", {**where, "part": part}))
        out.append(self._event("response.output_item.done", {"output_index": where["output_index"], "item": item}))
        self._items.append(item)
        return out

    def _close_call(self, index: int) -> list[bytes]:
        call = self._calls[index]
        arguments = "".join(call["arguments"])
        item = output_item(self._id, len(self._items), call["id"], call["name"], arguments, self._tools)
        where = self._where()
        out: list[bytes] = []
        if item["type"] == "custom_tool_call":
            out.append(self._event("response.custom_tool_call_input.done", {**where, "input": item["input"]}))
        else:
            if not arguments:
                # Arguments given as nothing are `{}` (output_item): the deltas add up to them.
                out += self._arguments_delta(index, item["arguments"])
            done = {**where, "name": item["name"], "arguments": item["arguments"]}
            out.append(self._event("response.function_call_arguments.done", done))
        out.append(self._event("response.output_item.done", {"output_index": where["output_index"], "item": item}))
        self._items.append(item)
        return out

    def _open_text(self, kind: str) -> list[bytes]:
        """A reasoning item (`kind` "reasoning") or a message item of text or a refusal, opened
        with its one part."""
        out = self._close()
        self._open, self._text = kind, []
        # One id per item: a text after a function call is another item.
        self._item_id = item_id("rs" if kind == "reasoning" else "msg", self._id, len(self._items))
        item: dict[str, Any]
        if kind == "reasoning":
            item = {"type": "reasoning", "id": self._item_id, "status": "in_progress", "summary": []}
            opened, part = "response.reasoning_summary_part.added", _summary_part("")
        else:
            item = {"type": "message", "id": self._item_id, "status": "in_progress", "role": "assistant", "content": []}
            opened = "response.content_part.added"
            part = {**_text_part(""), "logprobs": []} if kind == "text" else _refusal_part("")
        out.append(self._event("response.output_item.added", {"output_index": len(self._items), "item": item}))
        out.append(self._event(opened, {**self._part_where(), "part": part}))
        return out

    def _open_call(self, index: int) -> list[bytes]:
        out = self._close()
        self._open = f"call:{index}"
        call = self._calls[index]
        item = {**output_item(self._id, len(self._items), call["id"], call["name"], "", self._tools)}
        item["status"] = "in_progress"
        if item["type"] == "function_call":
            item["arguments"] = ""  # (the deltas add up to its arguments)
        self._item_id = item["id"]
        out.append(self._event("response.output_item.added", {"output_index": len(self._items), "item": item}))
        return out

    def on_chunk(self, chunk: dict[str, Any]) -> list[bytes]:
        out = [] if self._started else self._start(chunk)
        if chunk.get("usage"):
            self._usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            self._finish = choice.get("finish_reason") or self._finish
            for kind, key in (("reasoning", "reasoning_content"), ("text", "content"), ("refusal", "refusal")):
                if delta.get(key):
                    out += self._text_delta(kind, delta[key])
            for call in delta.get("tool_calls") or []:
                out += self._call_delta(call)
        return out

    def _text_delta(self, kind: str, text: str) -> list[bytes]:
        out: list[bytes] = []
        if self._open != kind:
            out += self._release()
            out += self._open_text(kind)
        self._text.append(text)
        data = {**self._part_where(), "delta": text}
        if kind == "text":
            data["logprobs"] = []
        out.append(self._event(_TEXT_EVENTS[kind][0], data))
        return out

    def _call_delta(self, call: dict[str, Any]) -> list[bytes]:
        """One chat tool-call delta: streamed into its item when that item is the open one (or
        none is), held when another call's item is open (sent by `_release`)."""
        index = int(call.get("index", 0))
        function = call.get("function") or {}
        arguments = function.get("arguments")
        out: list[bytes] = []
        if index in self._held:
            held = self._calls[index]
            held["id"] = held["id"] or call.get("id") or ""
            held["name"] = held["name"] or function.get("name") or ""
        elif self._open != f"call:{index}":
            self._calls[index] = {"id": call_id(call.get("id")), "name": function.get("name", ""), "arguments": []}
            if self._open is not None and self._open.startswith("call:"):
                self._held.append(index)
            else:
                out += self._open_call(index)
        if arguments:
            self._calls[index]["arguments"].append(arguments)
            if index not in self._held:
                out += self._arguments_delta(index, arguments)
        return out

    def _arguments_delta(self, index: int, arguments: str) -> list[bytes]:
        if self._tools is not None and self._calls[index]["name"] in self._tools.custom:
            return []  # a custom tool's input is its arguments' one string: sent whole at its end
        return [self._event("response.function_call_arguments.delta", {**self._where(), "delta": arguments})]

    def _release(self) -> list[bytes]:
        """The held calls, each a whole item after the open one (which this closes)."""
        out = self._close()
        held, self._held = self._held, []
        for index in held:
            out += self._open_call(index)
            arguments = "".join(self._calls[index]["arguments"])
            if arguments:
                out += self._arguments_delta(index, arguments)
            out += self._close()
        return out

    def on_done(self) -> list[bytes]:
        out = [] if self._started else self._start({})
        out += self._release()
        response = _ended(self._response(self._items, "completed"), self._finish)
        ending = "response.completed" if response["status"] == "completed" else "response.incomplete"
        out.append(self._event(ending, {"response": response}))
        return out

    def on_error(self, error: dict[str, Any]) -> list[bytes]:
        code = error.get("code")
        status = code if isinstance(code, int) else 500
        failed = self._response(self._items, "failed")
        failed["error"] = _failure(status, error)
        return [self._event("response.failed", {"response": failed})]


def _failure(status: int, error: dict[str, Any]) -> dict[str, Any]:
    """The `error` of a failed response: Codex reads its `code` (context_length_exceeded means
    compact the context; a rate limit is retried)."""
    code = error.get("code")
    if is_overflow(status, error):
        code = OVERFLOW_CODE
    elif not isinstance(code, str):
        code = "rate_limit_exceeded" if status == 429 else "server_error"
    return {"code": code, "message": str(error.get("message") or "")}


def error_body(status: int, error: dict[str, Any]) -> bytes:
    """An HTTP error in the OpenAI shape (the chat surface's re-shaping of an upstream's)."""
    return openai_error_body(status, error)


def stream_error(status: int, error: dict[str, Any]) -> bytes | None:
    """A streamed request's context overflow as `response.created` then `response.failed`:
    Codex recognises an overflow only there (an HTTP 400 is a fatal error to it). Other errors
    stay HTTP statuses, which the clients retry (429, 5xx) or report."""
    if not is_overflow(status, error):
        return None
    translator = StreamTranslator()
    created = translator._event(
        "response.created", {"response": _response(translator._id, "", [], None, "in_progress")}
    )
    return created + b"".join(translator.on_error({**error, "code": OVERFLOW_CODE}))
