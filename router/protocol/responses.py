"""OpenAI Responses (`POST /v1/responses`, what Codex CLI speaks), translated to and from the
internal chat step: input items become chat messages; the answer, plain or streamed, becomes
output items (messages and function calls) with `response.*` events and a final usage."""

from __future__ import annotations

import time
from typing import Any

import orjson

from router.errors import bad_request
from router.protocol.sse import ChunkTranslator


def _content_text(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            parts.append({"type": "image_url", "image_url": {"url": part["image_url"]}})
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _messages(items: Any) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise bad_request("'input' must be a string or an array of input items", param="input")
    messages: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise bad_request(f"input[{index}] must be an object", param=f"input[{index}]")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise bad_request(f"input[{index}].role must be user, assistant, system or developer")
            messages.append(
                {"role": "system" if role == "developer" else role, "content": _content_text(item.get("content"))}
            )
        elif kind == "function_call":
            call = {
                "id": item.get("call_id", ""),
                "type": "function",
                "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
            }
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant" and last.get("tool_calls") is not None:
                last["tool_calls"].append(call)  # parallel calls belong to one assistant turn
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": item.get("call_id", ""),
                    "content": output if isinstance(output, str) else orjson.dumps(output).decode(),
                }
            )
        # reasoning items stay with the model that wrote them; other item types are not sent on.
    return messages


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request as a chat-completions body; a client's mistake raises a 400."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request("'model' is required and must be a non-empty string", param="model")
    if "input" not in body:
        raise bad_request("'input' is required", param="input")
    messages = _messages(body["input"])
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.insert(0, {"role": "system", "content": body["instructions"]})
    chat: dict[str, Any] = {"model": model, "messages": messages, "stream": bool(body.get("stream", False))}
    if isinstance(body.get("max_output_tokens"), int):
        chat["max_tokens"] = body["max_output_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls", "prompt_cache_key"):
        if key in body:
            chat[key] = body[key]
    effort = (body.get("reasoning") or {}).get("effort") if isinstance(body.get("reasoning"), dict) else None
    if effort:
        chat["reasoning_effort"] = effort
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
    if tools:
        chat["tools"] = [
            {
                "type": "function",
                "function": {k: t[k] for k in ("name", "description", "parameters", "strict") if k in t},
            }
            for t in tools
        ]
        choice = body.get("tool_choice", "auto")
        if isinstance(choice, dict) and choice.get("type") == "function":
            choice = {"type": "function", "function": {"name": choice.get("name", "")}}
        chat["tool_choice"] = choice
    return chat


def _usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details") or {}
    prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
        "input_tokens_details": {
            "cached_tokens": int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        },
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def _message_item(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _call_item(call: dict[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call.get('id', '')}",
        "call_id": call.get("id", ""),
        "name": call.get("name", ""),
        "arguments": arguments,
        "status": "completed",
    }


def _response(
    response_id: str, model: str, output: list[dict[str, Any]], usage: dict[str, Any] | None, status: str = "completed"
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
    }


def from_chat(answer: dict[str, Any]) -> dict[str, Any]:
    """A chat completion as a Responses answer."""
    message = ((answer.get("choices") or [{}])[0]).get("message") or {}
    response_id = f"resp_{answer.get('id', 'tandem')}"
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append(_message_item(f"msg_{answer.get('id', 'tandem')}", message["content"]))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        output.append(
            _call_item({"id": call.get("id", ""), "name": function.get("name", "")}, function.get("arguments", ""))
        )
    return _response(response_id, answer.get("model", ""), output, _usage(answer.get("usage")))


class StreamTranslator(ChunkTranslator):
    """Chat-completion SSE chunks in, `response.*` events out (Codex needs `output_item.done` per
    item and `response.completed` with usage)."""

    def __init__(self) -> None:
        super().__init__()
        self._sequence = 0
        self._id = "resp_tandem"
        self._model = ""
        self._text: list[str] | None = None
        self._calls: dict[int, dict[str, Any]] = {}
        self._items: list[dict[str, Any]] = []
        self._usage: dict[str, Any] | None = None
        self._open: str | None = None  # "text" or "call:<index>"

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        self._sequence += 1
        return (
            b"event: "
            + kind.encode()
            + b"\ndata: "
            + orjson.dumps({"type": kind, "sequence_number": self._sequence, **data})
            + b"\n\n"
        )

    def _close(self) -> list[bytes]:
        out: list[bytes] = []
        if self._open == "text" and self._text is not None:
            item = _message_item(f"msg_{self._id}", "".join(self._text))
            index = len(self._items)
            out.append(
                self._event(
                    "response.output_text.done",
                    {
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "text": item["content"][0]["text"],
                    },
                )
            )
            out.append(self._event("response.output_item.done", {"output_index": index, "item": item}))
            self._items.append(item)
            self._text = None
        elif self._open is not None and self._open.startswith("call:"):
            call = self._calls[int(self._open[5:])]
            item = _call_item(call, "".join(call["arguments"]))
            index = len(self._items)
            out.append(
                self._event(
                    "response.function_call_arguments.done",
                    {"item_id": item["id"], "output_index": index, "arguments": item["arguments"]},
                )
            )
            out.append(self._event("response.output_item.done", {"output_index": index, "item": item}))
            self._items.append(item)
        self._open = None
        return out

    def on_chunk(self, chunk: dict[str, Any]) -> list[bytes]:
        out: list[bytes] = []
        if self._sequence == 0:
            self._id = f"resp_{chunk.get('id', 'tandem')}"
            self._model = chunk.get("model", "")
            out.append(
                self._event("response.created", {"response": _response(self._id, self._model, [], None, "in_progress")})
            )
        if chunk.get("usage"):
            self._usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                if self._open != "text":
                    out += self._close()
                    self._open, self._text = "text", []
                    item = {
                        "type": "message",
                        "id": f"msg_{self._id}",
                        "status": "in_progress",
                        "role": "assistant",
                        "content": [],
                    }
                    out.append(
                        self._event("response.output_item.added", {"output_index": len(self._items), "item": item})
                    )
                assert self._text is not None
                self._text.append(delta["content"])
                out.append(
                    self._event(
                        "response.output_text.delta",
                        {
                            "item_id": f"msg_{self._id}",
                            "output_index": len(self._items),
                            "content_index": 0,
                            "delta": delta["content"],
                        },
                    )
                )
            for call in delta.get("tool_calls") or []:
                index = int(call.get("index", 0))
                function = call.get("function") or {}
                if self._open != f"call:{index}":
                    out += self._close()
                    self._open = f"call:{index}"
                    self._calls[index] = {"id": call.get("id", ""), "name": function.get("name", ""), "arguments": []}
                    item = {**_call_item(self._calls[index], ""), "status": "in_progress"}
                    out.append(
                        self._event("response.output_item.added", {"output_index": len(self._items), "item": item})
                    )
                if function.get("arguments"):
                    self._calls[index]["arguments"].append(function["arguments"])
                    out.append(
                        self._event(
                            "response.function_call_arguments.delta",
                            {
                                "item_id": f"fc_{self._calls[index]['id']}",
                                "output_index": len(self._items),
                                "delta": function["arguments"],
                            },
                        )
                    )
        return out

    def on_done(self) -> list[bytes]:
        out = self._close()
        out.append(
            self._event("response.completed", {"response": _response(self._id, self._model, self._items, self._usage)})
        )
        return out

    def on_error(self, error: dict[str, Any]) -> list[bytes]:
        failed = _response(self._id, self._model, self._items, self._usage, "failed")
        failed["error"] = {"code": error.get("code") or "server_error", "message": error.get("message", "")}
        return [self._event("response.failed", {"response": failed})]
