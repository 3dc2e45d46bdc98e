"""Valid JSON from providers that cannot take our masks: parse, repair what is losslessly repairable,
validate, and retry with the exact errors.

`generate_json` is bounded (``max_attempts`` calls, never more) and never retries blindly: an
exception from ``call_llm`` itself (a transport or server error) propagates unchanged. Repairs are
named, off unless enabled, and never mutate what they are given.
"""

from __future__ import annotations

import json
import re
from typing import Callable, Iterable

from compiler.build import build
from compiler.ir import ABSENT, ANY, NEVER, Node
from compiler.keywords import ANNOTATIONS
from compiler.load import load_schema
from compiler.refs import SchemaDocument

from .validate import Validator

__all__ = ["generate_json", "describe_shape", "RepairFailed", "REPAIRS", "split_delimited_strings",
           "parse_reply", "CAPABILITIES"]

CAPABILITIES = ("none", "json_object", "json_schema")
"""What the provider enforces: nothing, any JSON object, or the schema itself."""

MAX_LISTED_ERRORS = 20


class RepairFailed(Exception):
    """No valid reply within ``max_attempts``; carries the last errors and the attempts made."""

    def __init__(self, errors: list[str], attempts: int, reply: str | None = None):
        self.errors = list(errors)
        self.attempts = attempts
        self.reply = reply
        shown = "; ".join(self.errors[:5]) + (" ..." if len(self.errors) > 5 else "")
        super().__init__(f"no valid JSON after {attempts} attempt{'s' if attempts != 1 else ''}: {shown}")


# --- repairs -----------------------------------------------------------------------------------------

_ARRAY_KEYS = {"type", "items", "minItems", "maxItems"}


def _is_string_array(schema) -> bool:
    """``{"type": "array", "items": {"type": "string"}}``, give or take annotations and item counts."""
    if not isinstance(schema, dict) or schema.get("type") != "array":
        return False
    items = schema.get("items")
    return (isinstance(items, dict) and items.get("type") == "string"
            and set(items) - ANNOTATIONS <= {"type"}
            and set(schema) - ANNOTATIONS <= _ARRAY_KEYS)


def split_delimited_strings(instance, schema):
    """Split a comma-joined string given for a top-level array-of-strings property.

    Only top-level properties whose schema is an array of plain strings; parts are stripped and empty
    parts dropped. An empty or whitespace-only string is left alone (it must still fail), and so is
    anything that is not a string: no recursion, no number-to-string coercion, no other arrays.
    Returns a new object when something was split, else `instance` itself.
    """
    schema = load_schema(schema)
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return instance
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return instance
    out = None
    for name, value in instance.items():
        if not isinstance(value, str) or not value.strip() or not _is_string_array(properties.get(name)):
            continue
        parts = [p.strip() for p in value.split(",")]
        parts = [p for p in parts if p]
        if not parts:
            continue
        if out is None:
            out = dict(instance)
        out[name] = parts
    return instance if out is None else out


REPAIRS: dict[str, Callable] = {"split_delimited_strings": split_delimited_strings}
"""The named repairs ``generate_json(repairs=...)`` can enable: ``repair(instance, schema) -> instance``."""


def _repair_functions(repairs) -> list[Callable]:
    names = [repairs] if isinstance(repairs, str) else list(repairs)
    unknown = [n for n in names if n not in REPAIRS]
    if unknown:
        raise ValueError(f"unknown repair {unknown[0]!r}; known repairs: {', '.join(sorted(REPAIRS))}")
    return [REPAIRS[n] for n in names]


# --- parsing a reply ----------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)\r?\n?[ \t]*```", re.DOTALL)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_reply(reply: str):
    """Parse a model reply as JSON, unwrapping a Markdown code fence (```json or bare) if present.

    Raises ValueError with the position of the problem. Nothing else is guessed: prose around bare
    JSON, single quotes or trailing commas stay errors, so the model is told and corrects itself.
    """
    text = reply.strip()
    try:
        return _loads(text)
    except ValueError as error:
        fenced = _FENCE.search(text)
        if fenced is None:
            raise error from None
    return _loads(fenced.group(1).strip())


def _loads(text: str):
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"{e.msg} at line {e.lineno} column {e.colno}") from None


# --- describing the shape -----------------------------------------------------------------------------

def _chain(node: Node, hops: int = 8) -> list[Node]:
    """``node`` and the schemas its ``$ref`` chain leads to (a few hops: a describing, not a
    validating, walk). From 2019-09 a ``$ref``'s siblings apply beside its target; drafts 3 to 7
    read none (``build`` leaves such a node the ``$ref`` alone)."""
    chain = [node]
    while node.ref is not None and hops > 0:
        node, hops = node.ref, hops - 1
        chain.append(node)
    return chain


def _target(node: Node) -> Node:
    """The first schema of ``node``'s ``$ref`` chain that says what a value is."""
    return next((n for n in _chain(node) if n is ANY or n is NEVER or _says_kind(n)), _chain(node)[-1])


def _says_kind(node: Node) -> bool:
    return (node.types is not None or node.enum is not None or node.const is not ABSENT or node.object is not None
            or node.array is not None or bool(node.any_of or node.one_of or node.all_of))


_NOUNS = {"string": "a string", "integer": "an integer", "number": "a number",
          "boolean": "true or false", "null": "null", "object": "a JSON object"}


def _kind(node: Node, depth: int = 0) -> str:
    """A few words for what a value of the schema of `node` must be."""
    node = _target(node)
    if node is ANY:
        return "any JSON value"
    if node is NEVER:
        return "nothing (leave it out)"
    if node.const is not ABSENT:
        return "exactly " + json.dumps(node.const, ensure_ascii=False)
    if node.enum is not None:
        text = json.dumps(node.enum, ensure_ascii=False)
        return "one of " + (text if len(text) <= 200 else text[:196] + " ...]")
    for branches in (node.any_of, node.one_of):
        if branches is not None and depth < 3:
            kinds = []
            for branch in branches:
                k = _kind(branch, depth + 1)
                if k not in kinds:
                    kinds.append(k)
            return " or ".join(kinds)
    types = node.types
    if types is None:
        types = ("object",) if node.object is not None else ("array",) if node.array is not None else None
    if types is None:
        return _kind(node.all_of[0], depth + 1) if node.all_of and depth < 3 else "any JSON value"
    nouns = []
    for t in types:
        if t == "array":
            nouns.append(_array_kind(node, depth))
        elif t == "object" and node.object is not None and node.object.required:
            keys = ", ".join(json.dumps(k, ensure_ascii=False) for k in node.object.required[:8])
            nouns.append(f"a JSON object with keys {keys}")
        elif t == "string" and node.formats:
            nouns.append(f"a string ({', '.join(node.formats)})")
        else:
            nouns.append(_NOUNS.get(t, str(t)))
    return " or ".join(nouns)


def _array_kind(node: Node, depth: int) -> str:
    text = _array_words(node, depth)
    return text + " (no item twice)" if node.array is not None and node.array.unique else text


def _array_words(node: Node, depth: int) -> str:
    if node.array is not None and node.array.prefix:  # a tuple: its first items, in order
        if depth >= 3:
            return "a JSON array, never a joined string"
        firsts = "; ".join(f"item {i + 1} {_kind(p, depth + 1)}" for i, p in enumerate(node.array.prefix[:6]))
        return f"a JSON array ({firsts}), never a joined string"
    items = _target(node.array.rest) if node.array is not None and node.array.rest is not None else None
    if items is None or items is ANY or items is NEVER:
        return "a JSON array, never a joined string"
    if items.types == ("string",) and items.enum is None and items.const is ABSENT:
        return "a JSON array of strings, never a comma-joined string"
    if depth < 3:
        return f"a JSON array (each item {_kind(items, depth + 1)}), never a joined string"
    return "a JSON array, never a joined string"


def describe_shape(schema) -> str:
    """A short statement of the required shape, for prompts to providers that do not enforce schemas.

    Names the required keys and their types (arrays stated as "a JSON array, never a comma-joined
    string"), the optional keys, and whether other keys are allowed. ``schema`` is read as
    ``validate`` reads it (a schema it refuses raises the same error), or is a `Validator`'s root.
    """
    root = schema if isinstance(schema, Node) else build(SchemaDocument(load_schema(schema)))
    properties, required, additional = {}, [], None  # the object's, read along its $ref chain
    for node in _chain(root):
        if node.object is not None:
            for name, sub in node.object.properties.items():
                properties.setdefault(name, sub)
            required += [name for name in node.object.required if name not in required]
            additional = additional or node.object.additional
    if not properties:
        return f"Reply with only {_kind(root)}: no prose, no Markdown code fence."
    additional = additional or ANY
    lines = ["Reply with only a JSON object: no prose, no Markdown code fence."]

    def entry(name):
        return f'- "{name}": {_kind(properties.get(name, additional))}'

    if required:
        lines.append("Required keys:")
        lines.extend(entry(name) for name in required)
    optional = [name for name in properties if name not in required]
    if optional:
        lines.append("Optional keys:")
        lines.extend(entry(name) for name in optional)
    if additional is NEVER:
        lines.append("No other keys.")
    return "\n".join(lines)


# --- the loop -----------------------------------------------------------------------------------------

def _with_shape(messages: list, shape: str) -> list:
    """`messages` with `shape` appended to the last user message (copied, never mutated)."""
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        message = out[i]
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                out[i] = {**message, "content": f"{content}\n\n{shape}" if content else shape}
                return out
            if isinstance(content, list):
                out[i] = {**message, "content": [*content, {"type": "text", "text": shape}]}
                return out
    out.append({"role": "user", "content": shape})
    return out


def _feedback(errors: list[str]) -> str:
    listed = errors[:MAX_LISTED_ERRORS]
    more = len(errors) - len(listed)
    lines = ["Your previous reply is not acceptable:"]
    lines.extend(f"- {e}" for e in listed)
    if more:
        lines.append(f"- ... and {more} more")
    lines.append("Reply again with only the corrected JSON, no other text.")
    return "\n".join(lines)


def generate_json(call_llm: Callable[[list], str], schema, messages: Iterable[dict], *,
                  max_attempts: int = 3, capability: str = "none", repairs=(), resources=None) -> tuple[object, int]:
    """Ask `call_llm` until its reply is JSON valid against `schema`; return ``(value, attempts)``.

    Each reply is unwrapped from a Markdown code fence if there is one, parsed, repaired by the
    enabled `repairs` (names from `REPAIRS`), and validated. On failure the reply and a user message
    listing the errors (with their JSON pointers) are appended and the model is asked again; after
    `max_attempts` replies `RepairFailed` is raised with the last errors. With ``capability`` other
    than ``"json_schema"`` the shape (`describe_shape`) is added to the last user message; with
    ``"json_schema"`` the messages go out as given. Exceptions from `call_llm` propagate unchanged.
    ``resources`` (absolute URI -> schema) are the other files a multi-file schema refers to.
    """
    if capability not in CAPABILITIES:
        raise ValueError(f"capability must be one of {', '.join(CAPABILITIES)}, not {capability!r}")
    if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or max_attempts < 1:
        raise ValueError(f"max_attempts must be a positive integer, not {max_attempts!r}")
    fixes = _repair_functions(repairs)
    validator = Validator(schema, resources=resources)  # a schema we cannot check raises before any call
    conversation = list(messages)
    if capability != "json_schema":
        conversation = _with_shape(conversation, describe_shape(validator.root))
    errors: list[str] = []
    reply = None
    for attempt in range(1, max_attempts + 1):
        reply = call_llm(list(conversation))
        if not isinstance(reply, str):
            raise TypeError(f"call_llm must return the reply text (str), not {type(reply).__name__}")
        try:
            value = parse_reply(reply)
        except ValueError as e:
            errors = [f"invalid JSON: {e}"]
        else:
            for fix in fixes:
                value = fix(value, validator.schema)
            errors = validator.errors(value)
            if not errors:
                return value, attempt
        conversation += [{"role": "assistant", "content": reply},
                         {"role": "user", "content": _feedback(errors)}]
    raise RepairFailed(errors, max_attempts, reply)
