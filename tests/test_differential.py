"""Differential test: the compiled grammar accepts a document exactly when python-jsonschema validates it.

Schemas are generated (roots of every type, Unicode keys and enum values with NFC/NFD look-alikes
and astral scalars, nested objects and arrays, $ref), instances are built from the schema and then
mutated, and each is serialised in several whitespace styles. Keys are written in our canonical
order (``properties`` order, then the other required names, then the rest), which is the shape
the grammar promises to accept; where a complement (an overlapping ``oneOf``, a ``not``) names
properties of its own, those come first, so a valid instance it rejects must then be accepted by the
same schema compiled with ``property_order="any"`` (key order, not language).
"""

import json
import unicodedata

import jsonschema
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import constrain

NAMES = ["a", "b", "é", unicodedata.normalize("NFD", "é"), "😀", "key with space", "", "q\"uote", "ß", "日本"]
WORDS = ["x", "Lençóis", unicodedata.normalize("NFD", "Lençóis"), "😀!", "tab\tnl\n", "\\", "\x01", "日本語", "ẞ"]

leaf = st.one_of(
    st.just({"type": "null"}),
    st.just({"type": "boolean"}),
    st.builds(lambda lo, hi: {"type": "integer", **({"minimum": lo} if lo is not None else {}),
                              **({"maximum": hi} if hi is not None else {})},
              st.none() | st.integers(-50, 50), st.none() | st.integers(-50, 50)),
    st.builds(lambda lo, ex: {"type": "number", ("exclusiveMinimum" if ex else "minimum"): lo},
              st.integers(-20, 20).map(lambda n: n / 4), st.booleans()),
    st.builds(lambda lo, hi: {"type": "string", "minLength": lo, **({"maxLength": hi} if hi is not None else {})},
              st.integers(0, 3), st.none() | st.integers(0, 5)),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True).map(lambda v: {"enum": v}),
    st.sampled_from(WORDS + [1, None, True, [1, "x"], {"k": "é"}]).map(lambda v: {"const": v}),
    st.just({}),
    st.just(True),
    st.sampled_from(["null", "string", "object", "number"]).map(lambda t: {"not": {"type": t}}),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(lambda v: {"type": "string", "not": {"enum": v}}),
    st.integers(-3, 3).map(lambda n: {"type": "integer", "maximum": 5, "not": {"const": n}}),
)


def composite(children):
    props = st.dictionaries(st.sampled_from(NAMES), children, max_size=4)
    obj = st.builds(
        lambda p, req, extra: {"type": "object", "properties": p,
                               "required": [k for k, r in zip(p, req) if r], **extra},
        props, st.lists(st.booleans(), min_size=4, max_size=4),
        st.sampled_from([{}, {"additionalProperties": False}, {"additionalProperties": {"type": "integer"}}]))
    arr = st.builds(
        lambda items, lo, extra: {"type": "array", "items": items, "minItems": lo, **extra},
        children, st.integers(0, 2), st.sampled_from([{}, {"maxItems": 3}]))
    tup = st.builds(lambda pre, items: {"type": "array", "prefixItems": pre, "items": items},
                    st.lists(children, min_size=1, max_size=2), st.sampled_from([False, True, {"type": "null"}]))
    any_of = st.lists(children, min_size=2, max_size=3).map(lambda bs: {"anyOf": bs})
    one_of = st.lists(children, min_size=2, max_size=3).map(lambda bs: {"oneOf": bs})
    return st.one_of(obj, arr, tup, any_of, one_of)


schemas = st.recursive(leaf, composite, max_leaves=8)


def with_ref(schema):
    """Move the schema into $defs and refer to it, so $ref resolution is exercised too."""
    return {"$defs": {"root": schema}, "$ref": "#/$defs/root"}


@st.composite
def instance_for(draw, schema, depth=0):
    if schema is True or schema == {}:
        return draw(st.sampled_from([None, 1, "é", [1], {"a": None}]))
    if schema is False:
        return None
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            return draw(instance_for(draw(st.sampled_from(schema[keyword])), depth + 1))
    if "not" in schema and "type" not in schema:
        return draw(st.sampled_from([None, 1, "é", [1], {"a": None}, 2.5]))
    kind = schema.get("type")
    if kind == "null":
        return None
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "integer":
        return draw(st.integers(-60, 60))
    if kind == "number":
        return draw(st.integers(-30, 30).map(lambda n: n / 4) | st.integers(-10, 10))
    if kind == "string":
        return draw(st.text(st.sampled_from("aé😀\"\\\n\x01 /" + unicodedata.normalize("NFD", "é")), max_size=6))
    if kind == "array":
        prefix = [draw(instance_for(s, depth + 1)) for s in schema.get("prefixItems", [])]
        items = schema.get("items", True)
        n = draw(st.integers(0, 3)) if items is not False else 0
        rest = [draw(instance_for(items, depth + 1)) for _ in range(n)]
        return prefix + rest
    if kind == "object":
        out = {}
        for name, sub in schema.get("properties", {}).items():
            if name in schema.get("required", []) or draw(st.booleans()):
                out[name] = draw(instance_for(sub, depth + 1))
        if draw(st.booleans()) and schema.get("additionalProperties", True) is not False:
            out["zz_extra"] = draw(st.integers(0, 3))
        return out
    return None


def mutate(draw, value):
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return draw(st.sampled_from([None, True, 0, -1, 2.5, "", "é", [], {}]))
    if choice == 1 and isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {k: v for k, v in value.items() if k != key}
    if choice == 2 and isinstance(value, dict):
        return {**value, draw(st.sampled_from(NAMES)): draw(st.sampled_from([None, 1, "x"]))}
    if choice == 3 and isinstance(value, list):
        return value + [draw(st.sampled_from([None, 1, "x"]))]
    if choice == 4 and isinstance(value, str):
        return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), value) + draw(st.sampled_from(["", "a"]))
    return value


def canonical(instance, schema):
    """Reorder object keys the way the grammar writes them: properties order, then required, then the rest."""
    if isinstance(instance, float) and instance.is_integer() and abs(instance) < 2**53:
        return int(instance)  # integral numbers are written as integers (1.0 is not an integer here)
    if not isinstance(schema, dict):
        return instance
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            fits = [b for b in schema[keyword] if oracle(b).is_valid(instance)]
            return canonical(instance, (fits or schema[keyword])[0])
    if isinstance(instance, list):
        prefix = schema.get("prefixItems", [])
        return [canonical(v, prefix[i] if i < len(prefix) else schema.get("items", True)) for i, v in enumerate(instance)]
    if not isinstance(instance, dict):
        return instance
    props = schema.get("properties", {})
    order = list(props) + [r for r in schema.get("required", []) if r not in props]
    keys = [k for k in order if k in instance] + [k for k in instance if k not in order]
    extra = schema.get("additionalProperties", True)
    return {k: canonical(instance[k], props.get(k, extra)) for k in keys}


def serialisations(instance):
    yield "compact", json.dumps(instance, ensure_ascii=False, separators=(",", ":"))
    yield "bounded", json.dumps(instance, ensure_ascii=False)
    yield "bounded", json.dumps(instance, ensure_ascii=True)
    yield "flexible", json.dumps(instance, ensure_ascii=False, indent=2)


def any_order(schema, mode):
    """The same schema with named properties in any order (exact for these objects of few names)."""
    return constrain.compile(schema, whitespace=mode, property_order="any")


def oracle(schema):
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas, st.booleans(), st.data())
def test_grammar_agrees_with_jsonschema(schema, via_ref, data):
    """accepts(text) == jsonschema.is_valid(instance) for generated schemas and instances."""
    root = with_ref(schema) if via_ref else schema
    try:
        grammars = {mode: constrain.compile(root, whitespace=mode) for mode in ("compact", "bounded", "flexible")}
    except constrain.Unsatisfiable:
        event("unsatisfiable")
        assert not any(oracle(root).is_valid(data.draw(instance_for(schema))) for _ in range(3))
        return
    except constrain.UnsupportedKeyword:
        event("unsupported")
        return  # e.g. anyOf meeting siblings beyond what merge does; never a silent widening
    validator = oracle(root)
    for _ in range(4):
        instance = data.draw(instance_for(schema))
        if data.draw(st.booleans()):
            instance = mutate(data.draw, instance)
        instance = canonical(instance, schema)
        expected = validator.is_valid(instance)
        event(f"valid={expected}")
        for mode, text in serialisations(instance):
            accepted = grammars[mode].accepts(text)
            if expected and not accepted and any_order(root, mode).accepts(text):
                event("shape: keys valid in another order than the canonical one")
                continue  # a complement's names (oneOf, not) come before the rest: order, not language
            assert accepted == expected, (mode, text, expected)
