"""Schema loading: whatever the user hands us (a dict, a boolean, JSON text, a pydantic model) becomes
the parsed JSON of one schema document, or an `InvalidSchema` that says what was wrong and where."""

from __future__ import annotations

import json

from compiler.errors import InvalidSchema


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _parse(text) -> object:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidSchema("", f"schema text is not UTF-8 (byte {e.start})") from None
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise InvalidSchema("", f"schema text is not valid JSON: {e.msg} at line {e.lineno} "
                                f"column {e.colno} (char {e.pos})") from None
    except RecursionError:
        raise InvalidSchema("", "schema text is nested too deeply to parse") from None
    except ValueError as e:  # NaN / Infinity
        raise InvalidSchema("", f"schema text is not valid JSON: {e}") from None


def _is_pydantic_model(value) -> bool:
    return isinstance(value, type) and callable(getattr(value, "model_json_schema", None))


def load_schema(schema) -> object:
    """Return the schema as parsed JSON (a dict or a bool).

    Accepts a dict, a bool, JSON text (``str`` or ``bytes``) or a pydantic v2 model class (its
    ``model_json_schema()``; pydantic is only needed by whoever passes a model). Anything else is
    `InvalidSchema` at the root.
    """
    if isinstance(schema, (str, bytes, bytearray)):
        schema = _parse(schema)
    elif _is_pydantic_model(schema):
        schema = schema.model_json_schema()
    if isinstance(schema, (dict, bool)):
        return schema
    raise InvalidSchema("", f"a schema must be an object or a boolean, not {_kind(schema)}")
