"""OpenAI Responses requests (`POST /v1/responses`) as chat-completions bodies: input items
become chat messages, one assistant turn one message (its reasoning items its
`reasoning_content`), the leading instructions one system message; a mistyped field or an
unsupported one is a 400 that names it."""

from __future__ import annotations

from typing import Any

import orjson

from router.errors import bad_request
from router.protocol.fields import (
    Kind,
    check,
    one_of,
    required_problem,
    required_string,
    shown,
    shown_all,
    string_field,
    type_name,
)
from router.surfaces.responses.tools import CUSTOM_INPUT, chat_tool_choice, chat_tools, flat_name

# The request fields whose type is checked (a mistyped one is a 400 that names it), members
# after the object that holds them: the OpenAI Responses API reference's types and ranges.
FIELDS: dict[str, Kind] = {
    "stream": "bool",
    "input": "string|array",
    "instructions": "string",
    "max_output_tokens": "count",
    "max_tool_calls": "count",
    "temperature": "temperature",
    "top_p": "unit",
    "top_logprobs": "top_logprobs",
    # Every tool has a type: one without was left out unseen (not a function, namespace or
    # custom tool). Hosted types (web_search, …) are many and not sent on: not enumerated.
    "tools": "objects",
    "tools[].type": "string",
    "tools[].description": "string",
    "tools[].parameters": "object",
    "tools[].strict": "bool",
    "tool_choice": "string|object",
    "reasoning": "object",
    "reasoning.effort": "string",
    "reasoning.summary": "string",
    "parallel_tool_calls": "bool",
    "store": "bool",
    "background": "bool",
    "metadata": "object",
    "previous_response_id": "string",
    "prompt_cache_key": "string",
    "safety_identifier": "string",
    "service_tier": "string",
    "truncation": "string",
    "user": "string",
    "include": "strings",
    "text": "object",
    "text.format": "object",
    "text.verbosity": "string",
}
REQUIRED = frozenset(("tools[].type",))
_KEPT_ELSEWHERE = (
    (
        "conversation",
        "a conversation of OpenAI's Conversations API",
        "send the conversation in 'input', or name the last answer in 'previous_response_id'",
    ),
    ("prompt", "a prompt template kept by OpenAI", "send its text in 'instructions' or 'input'"),
)
TOOL_CHOICE_MODES = one_of("none", "auto", "required")
# What a Responses body says of its sender that its chat body does not carry upstream (OpenAI's
# chat API refuses `session_id`; `metadata` and `user` are the client's business with OpenAI):
# read to find the run as on the chat surface (identify.py), never sent on.
SAID = ("session_id", "litellm_session_id", "metadata", "prompt_cache_key", "user", "safety_identifier")


def _check_tool_choice(body: dict[str, Any]) -> None:
    """`tool_choice` is a mode or an object with a type; one forcing a function or a custom
    tool names it (the chat choice made of it named the function "")."""
    choice = body.get("tool_choice")
    if isinstance(choice, str):
        check(body, {"tool_choice": TOOL_CHOICE_MODES})
    elif isinstance(choice, dict):
        check(body, {"tool_choice.type": "string"}, frozenset(("tool_choice.type",)))
        if choice["type"] in ("function", "custom"):
            check(body, {"tool_choice.name": "name"}, frozenset(("tool_choice.name",)))
        elif choice["type"] == "allowed_tools" and "allowed_tools" not in choice:
            # Responses' own shape (chat's nests the two under `allowed_tools`, checked as chat's).
            required = frozenset(("tool_choice.mode", "tool_choice.tools"))
            check(body, {"tool_choice.mode": one_of("auto", "required"), "tool_choice.tools": "objects"}, required)


def _call_name(item: dict[str, Any], at: str) -> str:
    """A history call's chat name: in its namespace (Codex's sub-agent tools), as the tools'."""
    namespace = item.get("namespace")
    if namespace is not None and not (isinstance(namespace, str) and namespace):
        raise bad_request(f"{at}.namespace must be a non-empty string", param=f"{at}.namespace")
    return flat_name(namespace, required_string(item, "name", at))


def _file_part(part: dict[str, Any], at: str) -> dict[str, Any]:
    """An `input_file` as a chat `file` part (inline data or an uploaded file's id); a file by
    URL has no chat form."""
    file: dict[str, Any] = {}
    for key in ("file_data", "file_id", "filename"):
        if part.get(key) is not None:
            file[key] = string_field(part, key, at)
    if "file_data" not in file and "file_id" not in file:
        raise bad_request(
            f"{at}: an input_file needs file_data or file_id to be sent to a chat model (file_url is not supported)",
            param=at,
        )
    return {"type": "file", "file": file}


def _image_part(part: dict[str, Any], at: str) -> dict[str, Any]:
    url = part.get("image_url")
    if not isinstance(url, str) or not url:
        raise bad_request(
            f"{at}: an input_image needs an image_url (a URL or a data URL) to be sent to a chat model", param=at
        )
    image: dict[str, Any] = {"url": url}
    if isinstance(part.get("detail"), str):
        image["detail"] = part["detail"]
    return {"type": "image_url", "image_url": image}


def _content_text(content: Any, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request(required_problem(where, content, "a string or an array of content parts"), param=where)
    parts: list[dict[str, Any]] = []
    for n, part in enumerate(content):
        at = f"{where}[{n}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(part, dict):
            raise bad_request(f"{at} must be an object, got {type_name(part)}", param=at)
        if kind in ("input_text", "output_text", "text", "refusal"):
            parts.append({"type": "text", "text": string_field(part, "refusal" if kind == "refusal" else "text", at)})
        elif kind == "input_image":
            parts.append(_image_part(part, at))
        elif kind == "input_file":
            parts.append(_file_part(part, at))
        else:
            raise bad_request(f"{at}: a content part of type {shown(kind)} cannot be sent to a chat model", param=at)
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _messages(items: Any) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise bad_request("'input' must be a string or an array of input items", param="input")
    return [message for made in item_messages(items, 0) for message in made]


def item_messages(items: list[Any], first: int) -> list[list[dict[str, Any]]]:
    """The chat messages each of `input[first:]` (`items`) adds. A function call or a reasoning
    item joins the assistant message before it, so an item's translation depends on the one
    before: a body is split only after an item whose last message is not an assistant's
    (`usable`)."""
    turns = _Translation()
    out: list[list[dict[str, Any]]] = []
    for index, item in enumerate(items, start=first):
        made: list[dict[str, Any]] = []
        out.append(made)
        if not isinstance(item, dict):
            raise bad_request(f"input[{index}] must be an object, got {type_name(item)}", param=f"input[{index}]")
        kind = item.get("type", "message")
        if not isinstance(kind, str):
            raise bad_request(
                f"input[{index}].type must be a string, got {type_name(kind)}", param=f"input[{index}].type"
            )
        turns.add(kind, item, f"input[{index}]", made)
    return out


class _Translation:
    """The chat messages of input items, one item at a time (`add`), with what a later item
    joins: the last message made, the attachments message, and the message of a reasoning no
    output has joined yet (each known by identity)."""

    def __init__(self) -> None:
        self.last: dict[str, Any] | None = None
        # The attachments message made, if any, and its made list: known by identity, since a
        # user may write the note's words too.
        self.attachments: dict[str, Any] | None = None
        self.holder: list[dict[str, Any]] = []
        # The assistant message a reasoning item made: the assistant output that follows it (a
        # message, a call) joins it. Alone (a history cut after it), it says nothing: its
        # content "", which every chat server takes. It stays in the messages either way, so a
        # body is never split after a reasoning (it is an assistant's: `usable`).
        self.reasoning: dict[str, Any] | None = None

    def add(self, kind: str, item: dict[str, Any], at: str, made: list[dict[str, Any]]) -> None:
        if kind == "message":
            self._message(item, at, made)
        elif kind in ("function_call", "custom_tool_call"):
            self._call(kind, item, at, made)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item, at, made)
        elif kind == "reasoning":
            self._reasoning(item, at, made)
        # Items the provider ran itself (web search, computer use…) and types newer than this
        # gateway have no chat form and are not sent on (Codex sends its whole history, such
        # items included, every turn).

    def _message(self, item: dict[str, Any], at: str, made: list[dict[str, Any]]) -> None:
        role = item.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            raise bad_request(
                f"{at}.role must be user, assistant, system or developer, got {shown(role)}", param=f"{at}.role"
            )
        content = _content_text(item.get("content"), f"{at}.content")
        reasoning, self.reasoning = self.reasoning, None
        if role == "assistant" and reasoning is not None:
            reasoning["content"] = content  # the output the reasoning before it was for
            return
        self.last = {"role": "system" if role == "developer" else role, "content": content}
        made.append(self.last)

    def _call(self, kind: str, item: dict[str, Any], at: str, made: list[dict[str, Any]]) -> None:
        if kind == "function_call":
            arguments = string_field(item, "arguments", at)
        else:  # a custom tool's call: its chat function takes the text as its one argument
            arguments = orjson.dumps({CUSTOM_INPUT: string_field(item, "input", at)}).decode()
        call = {
            "id": required_string(item, "call_id", at),
            "type": "function",
            "function": {"name": _call_name(item, at), "arguments": arguments},
        }
        if self.reasoning is not None:
            self.reasoning["content"] = None  # a turn of calls only, as it is without reasoning
            self.reasoning = None
        if self.last is not None and self.last.get("role") == "assistant":
            # One assistant turn (its text, then each of its calls) is one chat message,
            # as the chat model wrote it; two would be a different conversation.
            self.last.setdefault("tool_calls", []).append(call)
        else:
            self.last = {"role": "assistant", "content": None, "tool_calls": [call]}
            made.append(self.last)

    def _output(self, item: dict[str, Any], at: str, made: list[dict[str, Any]]) -> None:
        tool, media = _call_output(item, at)
        self.reasoning = None
        last = self.last
        if last is not None and last is self.attachments:
            # Every tool message follows the calls directly: this one goes before the
            # attachments of the outputs before it, which then take this output's too.
            self.holder.insert(_place(self.holder, last), tool)
            last["content"] += media
        elif media:
            self.last = self.attachments = {"role": "user", "content": media}
            self.holder = made
            made += [tool, self.last]
        else:
            self.last = tool
            made.append(tool)

    def _reasoning(self, item: dict[str, Any], at: str, made: list[dict[str, Any]]) -> None:
        """A reasoning item's text as the `reasoning_content` of the assistant message it was
        for (chat servers take it back so: vLLM's chat templates, DeepSeek's thinking mode,
        which refuses a tool-call turn without it). Without text (an encrypted reasoning only)
        there is nothing a chat model can read: not sent on."""
        text = _reasoning_text(item, at)
        if not text:
            return
        last = self.last
        if last is not None and last.get("role") == "assistant":
            # (Several reasoning items in a row, or reasoning between a turn's text and calls.)
            last["reasoning_content"] = last.get("reasoning_content", "") + text
            return
        self.last = self.reasoning = {"role": "assistant", "content": "", "reasoning_content": text}
        made.append(self.last)


def _place(messages: list[dict[str, Any]], message: dict[str, Any]) -> int:
    """Where `message` is in `messages`, by identity (two messages may be equal)."""
    return next(n for n, one in enumerate(messages) if one is message)


def _reasoning_text(item: dict[str, Any], at: str) -> str:
    """A reasoning item's text: its reasoning text (`content`, as open-weight models' servers
    give it), else its summary's parts (each a paragraph); "" when it has neither."""
    for key, kind, separator in (("content", "reasoning_text", ""), ("summary", "summary_text", "\n\n")):
        parts = item.get(key)
        if not isinstance(parts, list):
            continue
        texts = [
            string_field(part, "text", f"{at}.{key}[{n}]")
            for n, part in enumerate(parts)
            if isinstance(part, dict) and part.get("type") == kind
        ]
        if any(texts):
            return separator.join(texts)
    return ""


ATTACHMENTS_NOTE = "Attachments of the output of function call "


def _call_output(item: dict[str, Any], at: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A function call's output as a tool message (its text) and the parts that must follow it
    in a user message (its images and files, after a note naming the call): a chat tool
    message carries text only."""
    call_id = required_string(item, "call_id", at)
    output = item.get("output")
    if isinstance(output, str) or output is None:
        return {"role": "tool", "tool_call_id": call_id, "content": output or ""}, []
    if isinstance(output, dict):
        return {"role": "tool", "tool_call_id": call_id, "content": orjson.dumps(output).decode()}, []
    if not isinstance(output, list):
        # A number or a boolean is no output a tool returns: the client's mistake, not text.
        expected = "a string, an array of content parts or an object"
        raise bad_request(f"{at}.output must be {expected}, got {type_name(output)}", param=f"{at}.output")
    parts = _content_text(output, f"{at}.output")
    if isinstance(parts, str):
        return {"role": "tool", "tool_call_id": call_id, "content": parts}, []
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    media = [p for p in parts if p["type"] != "text"]
    note = f"[{len(media)} attachment(s) of this output follow in the next user message]"
    tool = {"role": "tool", "tool_call_id": call_id, "content": f"{text}\n{note}" if text else note}
    return tool, [{"type": "text", "text": f"{ATTACHMENTS_NOTE}{call_id}:"}, *media]


def _is_attachments(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and str(content[0].get("text", "")).startswith(ATTACHMENTS_NOTE)
    )


def _leading_run(messages: list[dict[str, Any]], count: int) -> int:
    """How many of `messages[:count]` lead as system messages with text (what the instructions
    join)."""
    first = 0
    while first < count and messages[first]["role"] == "system" and isinstance(messages[first]["content"], str):
        first += 1
    return first


def usable(messages: list[dict[str, Any]], count: int) -> bool:
    """Whether a body may be split where `messages[:count]` have been made: no later item can
    change them (a function call joins an assistant message; a system message the leading run;
    a function call's output goes before the attachments of the outputs before it)."""
    if count == 0 or messages[count - 1]["role"] == "assistant" or _is_attachments(messages[count - 1]):
        return False
    return _leading_run(messages, count) < count


def leading(body: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The system message the instructions and the leading system messages become, and how
    many of `messages` it stands for."""
    run = _leading_run(messages, len(messages))
    return _leading_system(body.get("instructions"), messages[:run]), run


def _leading_system(instructions: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The instructions and the system/developer messages before the first other one become one
    system message: Codex sends two developer messages after its instructions, and many chat
    templates accept one system message, first, only."""
    texts = [instructions] if isinstance(instructions, str) and instructions else []
    first = 0
    while first < len(messages) and messages[first]["role"] == "system" and isinstance(messages[first]["content"], str):
        texts.append(messages[first]["content"])
        first += 1
    if not texts:
        return messages
    return [{"role": "system", "content": "\n\n".join(texts)}, *messages[first:]]


def check_request(body: dict[str, Any]) -> None:
    """The checks on a Responses request's own fields (its items are checked as translated)."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad_request(required_problem("'model'", model, "a non-empty string"), param="model")
    given = body.get("input")
    if not (isinstance(given, str) and given) and not (isinstance(given, list) and given):
        expected = "a non-empty string or a non-empty array of items"
        raise bad_request(required_problem("'input'", given, expected), param="input")
    check(body, FIELDS, REQUIRED)
    _check_tool_choice(body)
    # What OpenAI keeps on its side and this gateway does not: dropped, the model would answer
    # without the conversation or the instructions they stand for, and the client not know.
    for field, what, instead in _KEPT_ELSEWHERE:
        if body.get(field) is not None:
            raise bad_request(f"'{field}' ({what}) is not supported by this gateway; {instead}", param=field)


def to_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request as a chat-completions body; a client's mistake raises a 400."""
    check_request(body)
    messages = _messages(body["input"])
    if not messages:
        kinds = shown_all(item.get("type") for item in body["input"] if isinstance(item, dict))
        raise bad_request(
            f"'input' has no item a chat model can be sent (message, function_call, function_call_output, "
            f"custom_tool_call, custom_tool_call_output); it has items of type {kinds}",
            param="input",
        )
    return chat_fields(body, _leading_system(body.get("instructions"), messages))


def chat_fields(body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The chat-completions body of a checked Responses request whose messages are `messages`."""
    chat: dict[str, Any] = {"model": body["model"], "messages": messages, "stream": bool(body.get("stream", False))}
    if body.get("max_output_tokens") is not None:
        # Not `max_tokens`: OpenAI's reasoning models (o-series, gpt-5) refuse it; vLLM and the
        # other chat servers take this one.
        chat["max_completion_tokens"] = body["max_output_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls", "prompt_cache_key"):
        if key in body:
            chat[key] = body[key]
    text = body.get("text")
    if isinstance(text, dict):
        chat.update(text_options(text))
    reasoning = body.get("reasoning")
    effort = string_field(reasoning, "effort", "reasoning") if isinstance(reasoning, dict) else None
    if effort:
        chat["reasoning_effort"] = effort
    tools = chat_tools(body.get("tools") or [])
    if tools:
        chat["tools"] = tools
        chat["tool_choice"] = chat_tool_choice(body.get("tool_choice", "auto"))
    return chat


def text_options(text: dict[str, Any]) -> dict[str, Any]:
    """The chat fields of a request's `text` (structured output): `format` becomes
    `response_format`, `verbosity` stays itself; a format of another type is a 400 naming it."""
    out: dict[str, Any] = {}
    if isinstance(text.get("verbosity"), str):
        out["verbosity"] = text["verbosity"]
    form = text.get("format")
    if form is None:
        return out
    kind = form.get("type") if isinstance(form, dict) else None
    if kind in ("text", "json_object"):
        out["response_format"] = {"type": kind}
    elif kind == "json_schema":
        assert isinstance(form, dict)
        if not isinstance(form.get("schema"), dict):
            raise bad_request("text.format.schema must be an object (a JSON schema)", param="text.format.schema")
        schema = {k: form[k] for k in ("name", "schema", "description", "strict") if form.get(k) is not None}
        schema.setdefault("name", "response")
        out["response_format"] = {"type": "json_schema", "json_schema": schema}
    else:
        raise bad_request(
            f"text.format must be an object of type text, json_object or json_schema, got {shown(kind)}",
            param="text.format",
        )
    return out


def text_format(chat: dict[str, Any] | None) -> dict[str, Any]:
    """A chat body's `response_format` as the Responses `text.format` its answer echoes."""
    form = (chat or {}).get("response_format")
    if not isinstance(form, dict) or form.get("type") not in ("json_object", "json_schema"):
        return {"type": "text"}
    if form["type"] == "json_object":
        return {"type": "json_object"}
    schema = form.get("json_schema")
    return {"type": "json_schema", **(schema if isinstance(schema, dict) else {})}
