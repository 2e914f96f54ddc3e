"""Field transcripts (router/trajectory/fields.py): an answer of `[[ ## name ## ]]` fields and the
rebuilt prompt that lists it as its last step have one form; other texts have none."""

from __future__ import annotations

from router.trajectory import identify
from router.trajectory.fields import MAX_FIELDS, MAX_STEP_FIELDS, answer_form, transcript_forms

ANSWER = (
    "[[ ## next_thought ## ]]\nLook up the weather.\n\n[[ ## next_tool_name ## ]]\nget_weather\n\n"
    '[[ ## next_tool_args ## ]]\n{"city": "Paris", "days": 2}\n\n[[ ## completed ## ]]'
)


def _prompt(args: str, observation: str = "sunny") -> str:
    return (
        "[[ ## question ## ]]\nWeather?\n\n[[ ## trajectory ## ]]\n[[ ## thought_0 ## ]]\nLook up the weather.\n\n"
        f"[[ ## tool_name_0 ## ]]\nget_weather\n\n[[ ## tool_args_0 ## ]]\n{args}\n\n"
        f"[[ ## observation_0 ## ]]\n{observation}\n\nRespond with the corresponding output fields."
    )


def test_the_answer_and_the_prompt_that_lists_it_have_one_form() -> None:
    form = answer_form(ANSWER)
    assert form is not None
    assert form in transcript_forms(_prompt('{"days": 2, "city": "Paris"}'))  # keys in another order
    assert form in transcript_forms(_prompt("{'city': 'Paris', 'days': 2}"))  # a Python literal
    [key] = [k for k in identify.message_answer_key({"role": "assistant", "content": ANSWER}).split(",") if k[0] == "t"]
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": _prompt('{"city": "Paris", "days": 2}')},
    ]
    assert key in identify.transcript_keys(messages)


def test_an_answer_of_one_json_object_has_the_form_of_its_fields() -> None:
    """DSPy's JSON adapter (its fallback where the chat adapter cannot read an answer) asks for the
    same fields as one JSON object; the next prompt lists its values as any other answer's."""
    form = answer_form(ANSWER)
    plain = '{"next_thought": "Look up the weather.", "next_tool_name": "get_weather", "next_tool_args": {"days": 2, "city": "Paris"}}'
    fenced = f"```json\n{plain}\n```"
    assert answer_form(plain) == form and answer_form(fenced) == form
    assert answer_form(plain) in transcript_forms(_prompt('{"city": "Paris", "days": 2}'))
    assert answer_form('{"next_thought": "Look up the weather."}') is None  # one value names nothing
    assert answer_form('{"next thought": "x", "b": "y"}') is None  # names that are not fields'
    assert answer_form('[{"a": 1}, {"b": 2}]') is None and answer_form("{not json}") is None
    assert answer_form("{" + ", ".join(f'"f{i}": {i}' for i in range(MAX_STEP_FIELDS + 1)) + "}") is None


def test_another_value_is_another_form() -> None:
    form = answer_form(ANSWER)
    assert form not in transcript_forms(_prompt('{"city": "Lyon", "days": 2}'))
    assert form not in transcript_forms(_prompt('{"city": "Paris"}'))


def test_texts_without_fields_or_steps_have_no_form() -> None:
    assert answer_form("Thought: I will call get_weather.") is None
    assert answer_form("[[ ## answer ## ]]\nonly one field") is None  # one value names nothing
    assert transcript_forms("[[ ## question ## ]]\nWeather?\n\n[[ ## trajectory ## ]]\n\n\nRespond.") == ()
    assert transcript_forms("no fields at all") == ()
    assert identify.transcript_keys([{"role": "assistant", "content": _prompt("{}")}]) == ()


def test_a_transcript_of_too_many_fields_is_not_read() -> None:
    steps = "".join(f"[[ ## thought_{i} ## ]]\nx\n\n" for i in range(MAX_FIELDS + 1))
    assert transcript_forms(steps) == ()
    many = "".join(f"[[ ## thought_1 ## ]]\nx{i}\n\n" for i in range(MAX_STEP_FIELDS + 1))
    assert transcript_forms(many) == ()  # no step of a transcript: its values are not parsed
    assert transcript_forms("".join(f"[[ ## thought_{i} ## ]]\nx\n\n" for i in range(3)) + "[[ ## tool_name_2 ## ]]\ny")
