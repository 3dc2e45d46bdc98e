"""One grammar for an OpenAI-style tool call: ``{"name": <a tool>, "arguments": <its parameters>}``.

Each tool's parameter schema is its own document, so its ``$ref`` pointers are rewritten to point
into the combined schema (``#/$defs/x`` of tool 2 becomes ``#/$defs/tool 2/$defs/x``). A tool whose
schema cannot be compiled is dropped with a warning naming it and the JSON pointer; the others keep
working. A tool the caller marks as required must compile.
"""

from __future__ import annotations

import warnings

from compiler.errors import SchemaError
from compiler.grammar import Grammar, compile
from compiler.load import load_schema
from compiler.refs import escape


def _name_and_parameters(tool) -> tuple[str, object]:
    if not isinstance(tool, dict):
        raise TypeError(f"a tool must be a dict, not {type(tool).__name__}")
    spec = tool.get("function", tool)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool has no name: {tool!r}"[:200])
    return name, spec.get("parameters", {"type": "object"})


def _rebase_refs(schema, prefix: str):
    """A copy of ``schema`` whose in-document ``$ref`` pointers start at ``prefix`` (iterative)."""
    root: list = [None]
    todo = [(schema, root, 0)]
    while todo:
        node, parent, key = todo.pop()
        if isinstance(node, dict):
            copy = dict.fromkeys(node)  # keys keep their order: property order is part of the shape
            for k, v in node.items():
                if k == "$ref" and isinstance(v, str) and v.startswith("#/"):
                    copy[k] = "#" + prefix + v[1:]
                elif k == "$ref" and v == "#":
                    copy[k] = "#" + prefix
                else:
                    todo.append((v, copy, k))
            parent[key] = copy
        elif isinstance(node, list):
            copy_list = [None] * len(node)
            for i, v in enumerate(node):
                todo.append((v, copy_list, i))
            parent[key] = copy_list
        else:
            parent[key] = node
    return root[0]


def compile_tools(tools, *, required=(), **compile_options) -> Grammar:
    """Compile a list of tools into the grammar of one call to any of them."""
    required = set(required)
    defs, branches, names = {}, [], set()
    for tool in tools:
        name, params = _name_and_parameters(tool)
        if name in names:
            raise ValueError(f"two tools are named {name!r}")
        names.add(name)
        try:
            params = load_schema(params)
            compile(params, **compile_options)
        except SchemaError as exc:
            if name in required:
                raise
            warnings.warn(f"tool {name!r} dropped: {exc}", stacklevel=2)
            continue
        key = f"tool {name}"
        defs[key] = _rebase_refs(params, "/$defs/" + escape(key))
        branches.append({"type": "object",
                         "properties": {"name": {"const": name}, "arguments": {"$ref": "#/$defs/" + escape(key)}},
                         "required": ["name", "arguments"], "additionalProperties": False})
    missing = required - names
    if missing:
        raise ValueError(f"required tools not in the list: {sorted(missing)}")
    if not branches:
        raise ValueError("no tool could be compiled")
    return compile({"$defs": defs, "anyOf": branches}, **compile_options)
