"""Schema loading: whatever the user hands us (a dict, a boolean, JSON text, a pydantic model) becomes
the parsed JSON of one schema document, or an `InvalidSchema` that says what was wrong and where."""

from __future__ import annotations

import json
from urllib.parse import urljoin, urlsplit

from compiler.errors import InvalidSchema, UnsupportedKeyword
from compiler.refs import child, id_word_and_ref_rule


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


def load_schema(schema, resources=None) -> object:
    """Return the schema as parsed JSON (a dict or a bool).

    Accepts a dict, a bool, JSON text (``str`` or ``bytes``) or a pydantic v2 model class (its
    ``model_json_schema()``; pydantic is only needed by whoever passes a model). Anything else is
    `InvalidSchema` at the root. ``resources`` (absolute URI -> schema) are bundled in (``bundle``).
    """
    if isinstance(schema, (str, bytes, bytearray)):
        schema = _parse(schema)
    elif _is_pydantic_model(schema):
        schema = schema.model_json_schema()
    if not isinstance(schema, (dict, bool)):
        raise InvalidSchema("", f"a schema must be an object or a boolean, not {_kind(schema)}")
    return bundle(schema, resources) if resources else schema


def bundle(root, resources) -> object:
    """``root`` with each of ``resources`` (absolute URI -> schema) embedded under ``$defs`` with the
    URI as its ``$id``: a compound document, the specification's way to ship several schemas as one
    (2020-12 §9.3), so that a ``$ref`` to the URI resolves inside and nothing is ever fetched."""
    if not hasattr(resources, "items"):
        raise TypeError(f"resources must map absolute URIs to schemas, not {type(resources).__name__}")
    if isinstance(root, bool):
        return root  # nothing in it can refer to them
    defs = dict(root.get("$defs", {})) if isinstance(root.get("$defs", {}), dict) else {}
    draft = root.get("$schema")
    id_word, ref_alone = id_word_and_ref_rule(draft)
    for uri, schema in resources.items():
        if not isinstance(uri, str) or not urlsplit(uri).scheme or urlsplit(uri).fragment:
            raise ValueError(f"a resource's URI must be absolute and without a fragment, not {uri!r}")
        uri = uri.rstrip("#")
        if uri in defs:
            raise ValueError(f"resource {uri!r} given twice (or the schema's $defs already has that name)")
        try:
            schema = load_schema(schema)
        except InvalidSchema as exc:
            raise InvalidSchema("", f"resource {uri!r}: {exc.reason}") from None
        if isinstance(schema, bool):
            schema = {} if schema else {"not": {}}
        own = schema.get("$schema")
        if isinstance(own, str) and isinstance(draft, str) and own.rstrip("#") != draft.rstrip("#"):
            raise UnsupportedKeyword(child("", "$defs", uri), "$schema",
                                     f"resource {uri!r} is of another draft ({own}) than the schema ({draft})")
        # a draft 3 to 7 `$ref` hides its siblings, a URI beside it too: the reference moves into an
        # allOf, the definitions a pointer leads to stay where they were
        hidden = ref_alone and "$ref" in schema
        ident = None if hidden else schema.get(id_word)
        if isinstance(ident, str) and urljoin(uri, ident).rstrip("#") != uri:
            # its own URI stays its base; the URI it was given under refers to it
            defs[uri] = {id_word: uri, "allOf": [{"$ref": urljoin(uri, ident)}], "$defs": {"resource": schema}}
        elif hidden:
            defs[uri] = {id_word: uri, "allOf": [{"$ref": schema["$ref"]}],
                         **{k: schema[k] for k in ("definitions", "$defs") if k in schema}}
        else:
            defs[uri] = {**schema, id_word: uri}
    return {**root, "$defs": defs}
