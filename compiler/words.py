"""A node written back as a schema object, in the lowering's words: what ``build.Reader`` reads.

The meet (``merge.py``), the complement and the conditionals' cases (``boolean.py``) make nodes,
and the lowering hands nodes about (``Lowering.value``, its combinators, the containers, the
deferral, the complement, ``alive.py``); the parts that still read schema objects (the validator
of literals, the unevaluated keywords' rewrite) are handed the node's words, and the reader that
wrote them knows their node from then on, so nothing is read twice. A node read from a
schema is written as that schema; a node made is written once (``Node.source`` keeps it).
Patterns, formats and steps gathered by a meet are tuples, and a complement's leaves are the
markers ``keywords.MARKERS`` names.
"""

from __future__ import annotations

from .ir import ABSENT, ANY, NEVER, Node

_LISTS = (("all_of", "allOf"), ("any_of", "anyOf"), ("one_of", "oneOf"))
_ONE = (("property_names", "propertyNames"), ("additional", "additionalProperties"))
_IN_PLACE = (("not_", "not"), ("if_", "if"), ("then", "then"), ("else_", "else"),
             ("unevaluated_properties", "unevaluatedProperties"), ("unevaluated_items", "unevaluatedItems"))


def words(node: Node, known) -> dict | bool:
    """The schema object of ``node``; ``known(schema, node)`` hears of each one written."""
    if node is ANY or node is NEVER:
        return node is ANY
    if node.source is not None:
        return node.source
    out: dict = {}
    said = vars(node)  # (what a node sets: the meet sets few fields, so few are looked at)

    def sub(n: Node):
        return n.source if n.source is not None else words(n, known)  # (a node read: most subschemas)

    if said.get("types") is not None:
        out["type"] = list(node.types)
    if said.get("enum") is not None:
        out["enum"] = node.enum
    if said.get("const", ABSENT) is not ABSENT:
        out["const"] = node.const
    if said.get("formats"):
        out["format"] = _gathered(node.formats)
    if said.get("not_values"):
        out["_not_values"] = node.not_values
    if said.get("string") is not None:
        _string(node.string, out)
    if said.get("number") is not None:
        _number(node.number, out)
    if said.get("one_of_first"):  # (before the properties: ``Node.one_of_first``)
        out["oneOf"] = [sub(part) for part in node.one_of]
    if said.get("object") is not None:
        _object(node.object, out, sub)
    if said.get("array") is not None:
        _array(node.array, out, sub)
    if said.get("ref") is not None:
        out["$ref"] = node.ref_text
    for field, word in _LISTS:
        if said.get(field) is not None and word not in out and (field != "all_of" or node.all_of):
            out[word] = [sub(part) for part in said[field]]
    for field, word in _IN_PLACE:
        if said.get(field) is not None:
            out[word] = sub(said[field])
    node.source = out
    known(out, node)
    return out


def _counts(least, most, noun: str, out: dict) -> None:
    if least is not None:
        out["min" + noun] = least
    if most is not None:
        out["max" + noun] = most


def _gathered(values: tuple):
    """One pattern, format or step as written; several as the tuple a meet gathers."""
    return values[0] if len(values) == 1 else tuple(values)


def _string(string, out: dict) -> None:
    _counts(string.min_length, string.max_length, "Length", out)
    if string.patterns:
        out["pattern"] = _gathered(string.patterns)
    if string.not_patterns:
        out["_not_patterns"] = tuple(string.not_patterns)
    if string.not_formats:
        out["_not_formats"] = tuple(string.not_formats)


def _number(number, out: dict) -> None:
    for word, bound in zip(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), number.bounds):
        if bound is not None:
            out[word] = bound
    if number.multiples:
        out["multipleOf"] = _gathered(number.multiples)
    if number.not_multiples:
        out["_not_multiples"] = list(number.not_multiples)
    if number.not_integer:
        out["_not_integer"] = True


def _object(obj, out: dict, sub) -> None:
    _counts(obj.min_properties, obj.max_properties, "Properties", out)
    if obj.required:
        out["required"] = list(obj.required)
    if obj.properties:
        out["properties"] = {name: sub(value) for name, value in obj.properties.items()}
    if obj.pattern_properties:
        out["patternProperties"] = {pattern: sub(value) for pattern, value in obj.pattern_properties}
    for field, word in _ONE:
        if getattr(obj, field) is not None:
            out[word] = sub(getattr(obj, field))
    for name, need in obj.dependent:
        key = "dependentRequired" if isinstance(need, list) else "dependentSchemas"
        out.setdefault(key, {})[name] = need if isinstance(need, list) else sub(need)
    if obj.some_member:
        out["_some_member"] = [
            {"names": sub(what), "value": sub(value)} if kind == "names" else
            {"pattern": what, "value": sub(value)} if kind == "pattern" else
            {"outside": list(what[0]), "patterns": list(what[1]), "value": sub(value)}
            for kind, what, value in obj.some_member]
    if obj.additional_unless:
        out["_additional_unless"] = [{"patterns": list(patterns), "value": sub(value)}
                                     for patterns, value in obj.additional_unless]


def _array(arr, out: dict, sub) -> None:
    _counts(arr.min_items, arr.max_items, "Items", out)
    if arr.listed:
        out["items"] = [sub(n) for n in arr.prefix]
        if arr.rest is not None:
            out["additionalItems"] = sub(arr.rest)
    else:
        if arr.prefix:
            out["prefixItems"] = [sub(n) for n in arr.prefix]
        if arr.rest is not None:
            out["items"] = sub(arr.rest)
    if arr.contains is not None:
        out["contains"] = sub(arr.contains)
        if arr.min_contains != 1:
            out["minContains"] = arr.min_contains
        if arr.max_contains is not None:
            out["maxContains"] = arr.max_contains
    if arr.contains_also:
        out["_contains_also"] = tuple(sub(n) for n in arr.contains_also)
    if arr.unique:
        out["uniqueItems"] = True
