"""Tool (function-calling) schemas for servers with narrower JSON Schema support than the spec.

LM Studio and llama.cpp reject boolean subschemas (``JSON schema error at
#/$defs/RecordSource/oneOf/1/properties/evidence: schema must be an object``), although pydantic and
hand-written schemas use them. `normalize_tool_schema` rewrites them into object forms with the same
meaning wherever one exists.
"""

from __future__ import annotations

from compiler import trampoline
from compiler.keywords import ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS

__all__ = ["normalize_tool_schema"]

NEVER = {"not": {}}
"""The object spelling of ``false``."""

# Keywords whose boolean value servers accept and whose meaning a rewrite would only obscure.
_KEEP_BOOLEAN = frozenset({"additionalProperties", "additionalItems", "unevaluatedProperties",
                           "unevaluatedItems"})
# Single-schema keywords where `true` constrains nothing, so the keyword can go.
_DROP_TRUE = frozenset({"items", "then", "else", "propertyNames", "contentSchema"})


def _as_object(value):
    if value is True:
        return {}
    if value is False:
        return dict(NEVER)
    return value


def normalize_tool_schema(schema):
    """Return `schema` without boolean subschemas (the input is never mutated).

    - ``true`` becomes ``{}``, or is dropped where the keyword is optional (``items``, ``then``,
      ``else``, ``propertyNames``, a branch of ``allOf``);
    - ``false`` under ``properties`` drops the property and its ``required`` entry; a ``false``
      branch of ``anyOf``/``oneOf`` is dropped (a keyword left with no branch becomes
      ``[{"not": {}}]``); ``items: false`` caps ``maxItems`` at the ``prefixItems`` length (or keeps
      a tighter ``maxItems``), 0 without a tuple; anywhere else ``false`` becomes ``{"not": {}}``;
    - ``additionalProperties``, ``additionalItems`` and the ``unevaluated*`` keywords keep their
      boolean values.

    A schema with nothing to rewrite is returned as the same object. Deep schemas are walked with an
    explicit stack, never the Python call stack.
    """
    return trampoline.run(_normalize(_as_object(schema) if isinstance(schema, bool) else schema), _normalize)




def _normalize(node):
    """Generator: yields each object subschema to normalise, returns the (possibly new) node."""
    if not isinstance(node, dict):
        return node
    out = None  # copy on first change

    def put(key, value):
        nonlocal out
        if out is None:
            out = dict(node)
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value

    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            new = yield from _properties(value)
            if new is not value:
                put(key, new)
                dropped = [name for name in value if name not in new]
                if dropped and isinstance(node.get("required"), list):
                    required = [r for r in node["required"] if r not in dropped]
                    put("required", required if required else _DROP)
        elif key in ONE_SCHEMA and isinstance(value, bool):
            if key in _KEEP_BOOLEAN:
                continue
            if key == "items" and value is False:
                put("items", _DROP)
                prefix = node.get("prefixItems")
                cap = len(prefix) if isinstance(prefix, list) else 0
                current = node.get("maxItems")
                if not (isinstance(current, int) and not isinstance(current, bool) and current <= cap):
                    put("maxItems", cap)
            elif value is True and key in _DROP_TRUE:
                put(key, _DROP)
            else:
                put(key, _as_object(value))
        elif key in ONE_SCHEMA and isinstance(value, dict):
            new = yield value
            if new is not value:
                put(key, new)
        elif key == "items" and isinstance(value, list):  # draft 4-2019 tuple form
            new = yield from _each(value)  # no keyword: every position is kept
            if new is not value:
                put(key, new)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            new = yield from _each(value, keyword=key)
            if new is not value:
                put(key, new)
        elif key in SCHEMA_MAPS and isinstance(value, dict):
            new = yield from _map(value)
            if new is not value:
                put(key, new)
    return node if out is None else out


class _Drop:
    """Marks a keyword to remove."""


_DROP = _Drop()


def _properties(props: dict):
    out = None
    for name, sub in props.items():
        if sub is False:
            new = _DROP
        elif sub is True:
            new = {}
        else:
            new = yield sub
        if new is not sub:
            if out is None:
                out = dict(props)
            if new is _DROP:
                del out[name]
            else:
                out[name] = new
    return props if out is None else out


def _map(value: dict):
    out = None
    for name, sub in value.items():
        if isinstance(sub, bool):
            new = _as_object(sub)
        elif isinstance(sub, dict):
            new = yield sub
        else:
            continue  # `dependencies` may map a name to a list of names
        if new is not sub:
            if out is None:
                out = dict(value)
            out[name] = new
    return value if out is None else out


def _each(branches: list, keyword: str = ""):
    out, changed = [], False
    for sub in branches:
        if sub is True and keyword == "allOf":
            changed = True  # constrains nothing
            continue
        if sub is False and keyword in ("anyOf", "oneOf"):
            changed = True  # never matches
            continue
        if isinstance(sub, bool):
            out.append(_as_object(sub))
            changed = True
        elif isinstance(sub, dict):
            new = yield sub
            changed |= new is not sub
            out.append(new)
        else:
            out.append(sub)
    if not changed:
        return branches
    if not out and keyword in ("anyOf", "oneOf"):
        return [dict(NEVER)]
    if not out and keyword == "allOf":
        return _DROP  # every branch was `true`: the keyword constrains nothing
    return out
