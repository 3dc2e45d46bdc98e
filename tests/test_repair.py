"""Behaviour of the repair loop for providers that cannot constrain decoding."""

import copy
import json

import pytest

from compiler.errors import UnsupportedKeyword
from constrain.repair import (
    REPAIRS,
    RepairFailed,
    describe_shape,
    generate_json,
    parse_reply,
    split_delimited_strings,
)
from constrain.validate import validate

SOURCES = {
    "type": "object",
    "properties": {"passed": {"type": "boolean"},
                   "sources": {"type": "array", "items": {"type": "string"}}},
    "required": ["passed", "sources"],
}
ORDER = {
    "type": "object",
    "properties": {"sku": {"type": "string"},
                   "items": {"type": "array", "items": {
                       "type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]}}},
    "required": ["sku", "items"],
}
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Report."}]


class Script:
    """A fake call_llm that replays canned replies and records what it was sent."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, messages):
        self.calls.append(json.loads(json.dumps(messages)))
        return self.replies.pop(0)


# --- split_delimited_strings: the motivating case -----------------------------------------------------

def test_comma_joined_sources_fail_raw_and_pass_repaired():
    """`"sources": "worker_1, worker_2"` fails validation, and passes once split."""
    answer = {"passed": True, "sources": "worker_1, worker_2"}
    assert validate(answer, SOURCES) == ["/sources: expected array"]
    repaired = split_delimited_strings(answer, SOURCES)
    assert repaired == {"passed": True, "sources": ["worker_1", "worker_2"]}
    assert validate(repaired, SOURCES) == []


def test_repair_is_the_cause_of_success():
    """The same reply fails the loop with the repair disabled and passes with it enabled."""
    reply = '{"passed": true, "sources": "worker_1, worker_2"}'
    with pytest.raises(RepairFailed) as info:
        generate_json(Script(reply), SOURCES, MESSAGES, max_attempts=1)
    assert info.value.errors == ["/sources: expected array"]
    value, attempts = generate_json(Script(reply), SOURCES, MESSAGES, max_attempts=1,
                                    repairs=("split_delimited_strings",))
    assert value == {"passed": True, "sources": ["worker_1", "worker_2"]} and attempts == 1


@pytest.mark.parametrize("sources", [3, "", " ", "  ,  "])
def test_negative_controls_still_fail(sources):
    """A number, an empty or blank string are left alone and still fail."""
    answer = {"passed": True, "sources": sources}
    repaired = split_delimited_strings(answer, SOURCES)
    assert repaired is answer
    assert validate(repaired, SOURCES) != []


def test_arrays_of_non_strings_are_not_widened():
    """A string for an integer-items array stays a string (no coercion to strings)."""
    schema = {"properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}
    answer = {"ids": "1, 2"}
    assert split_delimited_strings(answer, schema) is answer
    assert validate(answer, schema) == ["/ids: expected array"]


def test_nested_arrays_are_not_repaired():
    """Neither an array of arrays nor a property below the top level is split."""
    nested_items = {"properties": {"tags": {"type": "array", "items": {"type": "array",
                                                                        "items": {"type": "string"}}}}}
    assert split_delimited_strings({"tags": "a, b"}, nested_items) == {"tags": "a, b"}
    deeper = {"properties": {"meta": {"type": "object", "properties": {"sources": SOURCES["properties"]["sources"]}}}}
    answer = {"meta": {"sources": "a, b"}}
    assert split_delimited_strings(answer, deeper) is answer
    assert validate(answer, deeper) == ["/meta/sources: expected array"]


def test_repair_keeps_annotations_and_item_counts_in_scope():
    """Pydantic's titles and minItems do not stop the repair; empty parts are dropped."""
    schema = {"properties": {"tags": {"title": "Tags", "type": "array", "minItems": 1,
                                      "items": {"type": "string", "description": "a tag"}}}}
    assert split_delimited_strings({"tags": "a,, b ,"}, schema) == {"tags": ["a", "b"]}


def test_repair_never_mutates_instance_or_schema():
    """The caller's instance and schema are unchanged after a repair."""
    answer = {"passed": True, "sources": "a, b"}
    before, schema_before = copy.deepcopy(answer), copy.deepcopy(SOURCES)
    split_delimited_strings(answer, SOURCES)
    assert answer == before and SOURCES == schema_before


def test_repairs_are_named_and_unknown_names_refused():
    """Repairs are enabled by name; a misspelt name is an error before any call."""
    assert "split_delimited_strings" in REPAIRS
    script = Script("{}")
    with pytest.raises(ValueError, match="unknown repair"):
        generate_json(script, SOURCES, MESSAGES, repairs=("split_strings",))
    assert script.calls == []


# --- the loop -------------------------------------------------------------------------------------------

def test_loop_feeds_back_specific_errors_until_valid():
    """Prose, then a wrong type, then a fenced valid reply: three attempts, pointed feedback."""
    script = Script(
        "Sure! {sku: ABC}",
        '{"sku": "ABC", "items": [{"qty": "2"}]}',
        '```json\n{"sku": "ABC", "items": [{"qty": 2}]}\n```',
    )
    value, attempts = generate_json(script, ORDER, MESSAGES)
    assert value == {"sku": "ABC", "items": [{"qty": 2}]}
    assert attempts == 3
    second, third = script.calls[1], script.calls[2]
    assert second[-2] == {"role": "assistant", "content": "Sure! {sku: ABC}"}
    assert second[-1]["role"] == "user" and "invalid JSON" in second[-1]["content"]
    assert "/items/0/qty: expected integer" in third[-1]["content"]


def test_a_multi_file_schema_is_checked_with_its_resources():
    """``resources`` reach the validator: the other file's rule is enforced and fed back."""
    schema = {"type": "object", "properties": {"qty": {"$ref": "https://example.com/qty.json"}}, "required": ["qty"]}
    script = Script('{"qty": 0}', '{"qty": 3}')
    value, attempts = generate_json(script, schema, MESSAGES,
                                    resources={"https://example.com/qty.json": {"type": "integer", "minimum": 1}})
    assert (value, attempts) == ({"qty": 3}, 2)
    assert "/qty: below minimum 1" in script.calls[1][-1]["content"]


def test_exhausted_attempts_raise_a_typed_error():
    """After max_attempts replies RepairFailed carries the last errors and the attempt count."""
    script = Script('{"sku": 1, "items": []}', '{"sku": 2, "items": []}', "never asked")
    with pytest.raises(RepairFailed) as info:
        generate_json(script, ORDER, MESSAGES, max_attempts=2)
    assert info.value.attempts == 2
    assert info.value.errors == ["/sku: expected string"]
    assert info.value.reply == '{"sku": 2, "items": []}'
    assert len(script.calls) == 2


def test_transport_errors_propagate_without_retry():
    """An exception raised by call_llm itself is not retried and comes out unchanged."""
    calls = []
    boom = ConnectionError("502 from gateway")

    def call_llm(messages):
        calls.append(messages)
        raise boom

    with pytest.raises(ConnectionError) as info:
        generate_json(call_llm, ORDER, MESSAGES, max_attempts=5)
    assert info.value is boom and len(calls) == 1


def test_json_schema_capability_leaves_messages_byte_identical():
    """With capability="json_schema" the first request is exactly the caller's messages."""
    script = Script('{"sku": "A", "items": []}')
    generate_json(script, ORDER, MESSAGES, capability="json_schema")
    assert json.dumps(script.calls[0]) == json.dumps(MESSAGES)


@pytest.mark.parametrize("capability", ["none", "json_object"])
def test_other_capabilities_append_the_shape_to_the_prompt(capability):
    """Without schema enforcement the last user message gains describe_shape, the caller's list untouched."""
    messages = copy.deepcopy(MESSAGES)
    script = Script('{"passed": false, "sources": []}')
    generate_json(script, SOURCES, messages, capability=capability)
    sent = script.calls[0]
    assert sent[0] == MESSAGES[0]
    assert sent[1]["content"] == "Report.\n\n" + describe_shape(SOURCES)
    assert messages == MESSAGES


def test_shape_goes_into_multipart_content_as_a_text_part():
    """OpenAI-style content parts get one more text part."""
    messages = [{"role": "user", "content": [{"type": "text", "text": "Report."}]}]
    script = Script('{"passed": false, "sources": []}')
    generate_json(script, SOURCES, messages)
    assert script.calls[0][0]["content"][-1] == {"type": "text", "text": describe_shape(SOURCES)}


def test_bad_arguments_are_refused_before_calling():
    """Unknown capability, non-positive max_attempts and unsupported schemas fail fast."""
    script = Script("{}")
    with pytest.raises(ValueError):
        generate_json(script, ORDER, MESSAGES, capability="tools")
    with pytest.raises(ValueError):
        generate_json(script, ORDER, MESSAGES, max_attempts=0)
    with pytest.raises(UnsupportedKeyword):
        generate_json(script, {"$recursiveRef": "#"}, MESSAGES)
    assert script.calls == []


def test_non_text_reply_is_a_type_error():
    """call_llm must return the reply text."""
    with pytest.raises(TypeError):
        generate_json(lambda m: {"sku": "A"}, ORDER, MESSAGES)


# --- parsing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    '{"a": 1}', '  {"a": 1}\n', '```json\n{"a": 1}\n```', '```\n{"a": 1}\n```',
    'Here it is:\n```json\n{"a": 1}\n```\nAnything else?', '```JSON\r\n{"a": 1}\r\n```',
])
def test_parse_reply_unwraps_code_fences(reply):
    """Bare JSON and JSON in a Markdown fence (```json or bare) parse the same."""
    assert parse_reply(reply) == {"a": 1}


def test_parse_reply_keeps_fences_inside_json_strings():
    """A reply that is JSON already is not searched for fences."""
    assert parse_reply('{"code": "```py\\nx\\n```"}') == {"code": "```py\nx\n```"}


@pytest.mark.parametrize("reply", ["Sure! {sku: ABC}", "{'a': 1}", '{"a": 1,}', '{"a": NaN}', ""])
def test_parse_reply_does_not_guess(reply):
    """Prose, single quotes, trailing commas and NaN stay errors with a position."""
    with pytest.raises(ValueError):
        parse_reply(reply)


# --- describe_shape -----------------------------------------------------------------------------------

def test_describe_shape_names_required_keys_types_and_arrays():
    """Required keys with their types; arrays of strings are "a JSON array, never a comma-joined string"."""
    text = describe_shape({**SOURCES, "properties": {**SOURCES["properties"],
                                                     "note": {"type": ["string", "null"]}},
                           "additionalProperties": False})
    assert '"passed": true or false' in text
    assert '"sources": a JSON array of strings, never a comma-joined string' in text
    assert "Optional keys:" in text and '"note": a string or null' in text
    assert "No other keys." in text
    assert text.index("Required keys:") < text.index("Optional keys:")


def test_describe_shape_follows_refs_and_describes_non_objects():
    """pydantic-style `$ref`s are followed; a non-object root is described in one line."""
    schema = {"$defs": {"Item": {"type": "object", "properties": {"qty": {"type": "integer"}},
                                 "required": ["qty"]}},
              "type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
              "required": ["items"]}
    assert '"items": a JSON array (each item a JSON object with keys "qty")' in describe_shape(schema)
    assert describe_shape({"type": "array", "items": {"type": "string"}}).startswith(
        "Reply with only a JSON array of strings, never a comma-joined string")
    assert "one of" in describe_shape({"enum": ["a", "b"]})
    assert describe_shape({"type": "array", "items": {"type": "string"}, "uniqueItems": True}).startswith(
        "Reply with only a JSON array of strings, never a comma-joined string (no item twice):")
    pair = {"type": "array", "items": [{"type": "number"}, {"type": "string"}], "additionalItems": {"type": "boolean"}}
    assert describe_shape({"$schema": "http://json-schema.org/draft-07/schema#", **pair}).startswith(
        "Reply with only a JSON array (item 1 a number; item 2 a string), never a joined string")


def test_describe_shape_reads_the_schema_as_validate_does():
    """The shape is read off the same typed reading as validate's: a draft-4 ``const`` is no keyword
    there, a draft-7 ``$ref`` hides its siblings, and a schema validate refuses is refused here too."""
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "string", "const": 1}
    assert describe_shape(draft4).startswith("Reply with only a string:")
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
              "type": "object", "properties": {"a": {"$ref": "#/definitions/n", "enum": ["x"]}}}
    assert '"a": an integer' in describe_shape(draft7)
    with pytest.raises(UnsupportedKeyword, match="recursiveRef"):
        describe_shape({"type": "array", "$recursiveRef": "#"})


def test_describe_shape_keeps_a_refs_siblings_where_the_draft_applies_them():
    """From 2019-09 a ``$ref``'s siblings apply beside its target: the root's own keys are named with
    the target's; in draft 7 they are no keywords, and only the target's are."""
    base = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    schema = {"$ref": "#/$defs/base", "properties": {"count": {"type": "integer"}}, "required": ["count"],
              "$defs": {"base": base}}
    text = describe_shape(schema)
    required = text.split("Required keys:", 1)[1]
    assert '"count": an integer' in required and '"name": a string' in required
    assert '"a": one of ["x"]' in describe_shape({"$defs": {"n": {"type": "integer"}}, "type": "object",
                                                  "properties": {"a": {"$ref": "#/$defs/n", "enum": ["x"]}}})
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"base": base},
              "$ref": "#/definitions/base", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    text = describe_shape(draft7)
    assert '"name": a string' in text and "count" not in text


# --- the README section ---------------------------------------------------------------------------------

def test_hosted_providers_doc_examples_run_as_printed():
    """Every Python block of the README's hosted-providers section runs and prints what its comments say."""
    import pathlib
    import re
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    section = readme.split("## Hosted providers", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert blocks
    for block in blocks:
        run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                             cwd=root, timeout=120)
        assert run.returncode == 0, run.stderr
        printed = run.stdout.splitlines()
        for line in block.splitlines():
            if line.startswith("# ") and line[2:3] in "[{'0123456789":
                assert line[2:] in printed
