"""``allOf`` (and a ``$ref`` with sibling keywords) folded into one schema, keyword by keyword.

Each keyword has an exact meet: bounds take the tighter value, ``required`` and ``properties``
unite, ``type`` and ``enum`` intersect, patterns, formats and ``multipleOf`` accumulate (the
lowering intersects their automata), and where one side's patterns are not the other's, each
side's ``additionalProperties`` stays its own (``_additional_unless``: the keys outside that side's
patterns). Whatever has no exact meet here raises ``UnsupportedKeyword`` rather than
widening the language. Annotations and keywords outside the vocabularies are dropped.
"""

from __future__ import annotations

from typing import Callable

from .ir import literal_values
from .values import json_equal, json_in
from .errors import UnsupportedKeyword
from .keywords import ANNOTATIONS, MARKERS, VOCABULARY

NOT_MERGED = ANNOTATIONS | {"$defs", "definitions", "$id", "id", "$anchor", "$dynamicAnchor", "$schema", "$vocabulary",
                            "$comment"}
CONSTRAINING = (VOCABULARY | MARKERS) - NOT_MERGED  # the words ``constraints`` keeps
LOWER_BOUNDS = ("minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum")
UPPER_BOUNDS = ("maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum")
ACCUMULATED = ("pattern", "format", "multipleOf")  # kept as tuples; every entry applies


def constraints(schema: dict) -> dict:
    """The keywords of ``schema`` that constrain instances (annotations and unknown words dropped)."""
    if CONSTRAINING.issuperset(schema) and schema.get("uniqueItems") is not False:
        return dict(schema)  # most schemas, written by the compiler or plain: a copy, made in C
    out = {}
    for key, value in schema.items():
        if key not in CONSTRAINING or (key == "uniqueItems" and value is False):
            continue
        out[key] = value
    return out


def is_trivial(schema) -> bool:
    """Whether ``schema`` allows every value (``true``, or no constraining keyword)."""
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    return CONSTRAINING.isdisjoint(schema) or not constraints(schema)


def may_meet(schema) -> bool:
    """Whether the lowering's ``met`` may change ``schema``: an ``allOf``, a ``not``, a ``oneOf`` or
    an ``anyOf`` beside other keywords at its top."""
    return isinstance(schema, dict) and (
        "allOf" in schema or "not" in schema or "oneOf" in schema or "anyOf" in schema and len(schema) > 1)


def both(a, b):
    """A subschema meeting ``a`` and ``b`` without merging yet (merged when lowered)."""
    if a is True or is_trivial(a):
        return b
    if b is True or is_trivial(b):
        return a
    if a is False or b is False:
        return False
    kinds = [k for k in (_kinds(a), _kinds(b)) if k is not None]
    # a meet of meets is one list (an anyOf product's branches meet one more case per fold: nested,
    # 125 folds were 125 levels of lowering)
    parts = [*(a["allOf"] if _is_meet(a) else [a]), *(b["allOf"] if _is_meet(b) else [b])]
    if kinds:  # implied by the branches; read by later meets to drop branches early
        common = set.intersection(*kinds)
        return {"allOf": parts, "type": sorted(common)} if common else False
    return {"allOf": parts}


def _negation_of(x, y) -> bool:
    """Whether ``y`` is ``{"not": x}``, ``x`` written twice (a ``oneOf`` branch met with the
    complement of another that says the same of a name): nothing satisfies both."""
    return isinstance(y, dict) and y.keys() == {"not"} and isinstance(x, dict) and (y["not"] is x or json_equal(y["not"], x))


def branches_of(schema) -> list:
    """The branches of a bare ``anyOf`` (a union that may join another list), else the schema alone."""
    return schema["anyOf"] if _is_union(schema) else [schema]


def _is_union(schema) -> bool:
    """Only ``anyOf``: its branches may join another list."""
    return isinstance(schema, dict) and schema.keys() == {"anyOf"} and isinstance(schema["anyOf"], list)


def _is_meet(schema) -> bool:
    """Only ``allOf`` (and the ``type`` its parts imply, or narrower): its parts may join another list."""
    return isinstance(schema, dict) and isinstance(schema.get("allOf"), list) and schema.keys() <= {"allOf", "type"}


def _kinds(schema) -> set[str] | None:
    """The JSON types a schema's own ``type`` keyword allows (None: any), integer counted as number."""
    if schema is False:
        return set()
    declared = _types(schema) if isinstance(schema, dict) else None
    return None if declared is None else {"number" if k == "integer" else k for k in declared}


def _meets(*kinds) -> bool:
    """Whether some value could have a type each of ``kinds`` allows."""
    known = [k for k in kinds if k is not None]
    return not known or bool(set.intersection(*known))


def _types(schema) -> set[str] | None:
    t = schema.get("type")
    if t is None:
        return None
    return {t} if isinstance(t, str) else set(t)


def merge(a: dict, b: dict, pointer: str, resolve: Callable[[dict], dict], matches: Callable[[str, str], bool],
          read, alike: bool = False) -> dict | bool:
    """The meet of two constraint dicts (``$ref`` already resolved by ``resolve``; ``matches(pattern,
    name)`` tells whether a patternProperties pattern matches a property name; ``read(schema)`` its
    node, ``build.Reader.of``). ``alike``: two subschemas written alike are the same schema (a
    document with no identifier below its root, as ``Shapes`` has it), so a name's schema met with
    its own negation allows no value."""
    a, b = resolve(a), resolve(b)
    if a is False or b is False:
        return False
    out = dict(a)
    for key, vb in b.items():
        if key not in out:
            out[key] = vb
            continue
        va = out[key]
        if key == "type":
            ta, tb = _types(a), _types(b)
            meet = set()
            for t in ta:
                for u in tb:
                    if t == u:
                        meet.add(t)
                    elif {t, u} == {"integer", "number"}:
                        meet.add("integer")
            if not meet:
                return False  # no type both allow: no value
            out[key] = sorted(meet)
        elif key in LOWER_BOUNDS or key in UPPER_BOUNDS:
            if isinstance(va, bool) or isinstance(vb, bool):
                raise UnsupportedKeyword(pointer, key, "draft-4 boolean bounds inside allOf")
            out[key] = max(va, vb) if key in LOWER_BOUNDS else min(va, vb)
        elif key in ("enum", "const"):
            left = [va] if key == "const" else va
            right = [vb] if key == "const" else vb
            out.pop("const", None)
            out["enum"] = [v for v in left if json_in(v, right)]
        elif key == "properties":
            continue  # merged below, with each side's additionalProperties
        elif key in ACCUMULATED:
            out[key] = tuple(_as_tuple(va)) + tuple(x for x in _as_tuple(vb) if x not in _as_tuple(va))
        elif key == "required":
            out[key] = list(va) + [k for k in vb if k not in va]
        elif key in ("items", "prefixItems", "additionalItems"):
            continue  # merged below, position by position
        elif key in ("additionalProperties", "propertyNames"):
            out[key] = both(va, vb)
        elif key == "patternProperties":  # a key meets every pattern it matches, from either side
            out[key] = {p: both(va[p], vb[p]) if p in va and p in vb else va.get(p, vb.get(p))
                        for p in {**va, **vb}} if isinstance(va, dict) and isinstance(vb, dict) else va
        elif key == "anyOf" and json_equal(va, vb):  # the same branches twice (a $ref met with itself)
            continue
        elif key == "anyOf" and any(k in side for side in (a, b) for k in ("enum", "const")):
            out["allOf"] = [*out.get("allOf", ()), {"anyOf": vb}]  # judged value by value: no product
        elif key == "anyOf":
            out[key] = _branch_pairs(out, va, vb, pointer, read, alike)
        elif key == "contains" and not json_equal(va, vb) and not any(
                k in side for side in (a, b) for k in ("minContains", "maxContains")):
            out["_contains_also"] = tuple(out.get("_contains_also", ())) + (vb,)  # each found once
        elif key in ("minContains", "maxContains"):
            continue  # met below, with their contains
        elif key == "oneOf" and isinstance(vb, list) and vb and not json_equal(va, vb):
            # exactly one of each: the second as branches that exclude each other, met with any anyOf
            alone = exactly_one(vb)
            out["anyOf"] = _branch_pairs(out, out["anyOf"], alone, pointer, read, alike) if "anyOf" in out else alone
        elif key == "allOf":
            out[key] = list(va) + list(vb)
        elif key == "not":  # neither a nor b: not (a or b), one list however many meet (not nested)
            out[key] = {"anyOf": [*branches_of(va), vb]}
        elif key in MARKERS:
            out[key] = va if key == "_not_integer" else type(va)(va) + type(va)(vb)
        elif json_equal(va, vb):
            continue
        else:
            raise UnsupportedKeyword(pointer, key, "appears in several allOf branches with different values")
    if "enum" in a and "const" in b or "const" in a and "enum" in b:
        others = literal_values(read(b))
        out.pop("const", None)
        out["enum"] = [v for v in literal_values(read(a)) if json_in(v, others)]
    if not {"minContains", "maxContains"}.isdisjoint({*a, *b}):
        _merge_counts(a, b, out)
    if "properties" in a or "properties" in b:
        out["properties"] = _merge_properties(a, b, matches, alike)
    if any(k in side for side in (a, b) for k in ("items", "prefixItems")):
        _merge_arrays(a, b, out)
    for x, y in ((a, b), (b, a)):  # x's patterned keys are additional to y: they meet y's additionalProperties
        theirs = y.get("patternProperties", {})
        mine = {p: sub for p, sub in x.get("patternProperties", {}).items() if p not in theirs}  # y's too: not additional
        if mine and "additionalProperties" in y and y["additionalProperties"] is not True:
            # a name of y's that a pattern of x's matches would meet y's additionalProperties too
            named = [name for name, sub in y.get("properties", {}).items() if sub is not False]
            if theirs or any(matches(p, name) for p in mine for name in named):
                # y's additionalProperties stays y's: for the keys outside the names that match
                # none of y's patterns (each named key met it already, in ``_merge_properties``)
                out["_additional_unless"] = [*out.get("_additional_unless", ()),
                                             {"patterns": sorted(theirs), "value": y["additionalProperties"]}]
                continue
            out["patternProperties"] = {p: both(sub, y["additionalProperties"]) if p in mine else sub
                                        for p, sub in out["patternProperties"].items()}
    if _types(out) == {"object"} and any(rules_out(out, name) for name in out.get("required", ())):
        return False  # a name required and ruled out: no object
    return out


def rules_out(rules: dict, name) -> bool:
    """Whether ``rules`` surely allows no member ``name``: its schema there is ``false``, or the
    object is closed (``additionalProperties: false``, no key patterns) and does not name it."""
    props = rules.get("properties", {})
    if name in props:
        return props[name] is False
    return rules.get("additionalProperties") is False and not rules.get("patternProperties")


def implied(rules: dict, part) -> bool:
    """Whether the object-only ``rules`` surely satisfy ``part``: a union of which one branch only
    rules out members ``rules`` rules out already (the complement of ``required`` beside a closed
    object that does not name the name)."""
    return _types(rules) == {"object"} and _is_union(part) and any(
        isinstance(b, dict) and b.keys() <= {"type", "properties"} and _kinds(b) in (None, {"object"})
        and b.get("properties") and all(sub is False and rules_out(rules, n) for n, sub in b["properties"].items())
        for b in part["anyOf"])


def _branch_pairs(out: dict, va: list, vb: list, pointer: str, read, alike: bool) -> list:
    """Two anyOf lists met: every pair of branches, but those whose types cannot meet (nor ``out``'s),
    and those another pair holds: a branch of ``va`` that already meets a branch of ``vb`` (it is
    one, or one of its parts: ``x`` met with ``x`` is ``x``) is kept alone, as it holds its meet
    with every other, and a branch of ``vb`` that is a whole branch of ``va`` pairs with no other
    (``x`` holds ``y`` met with ``x``). The same ``$ref`` met with itself, or the complements of a
    ``oneOf``'s branches, each "a shared name is wrong", multiplied past the bound. ``alike``:
    branches written alike are one."""
    kinds = _kinds(out)

    def same(x, y) -> bool:
        return x is y or alike and json_equal(x, y)

    alone = [x for x in va if any(same(f, y) for f in (x, *(x["allOf"] if _is_meet(x) else ())) for y in vb)]
    if alone:
        va = [x for x in va if not any(x is a for a in alone)]
        vb = [y for y in vb if not any(same(y, a) for a in alone)]
    pairs = [(x, True) for x in alone if _meets(kinds, _kinds(x))]
    pairs += [(x, y) for x in va if _meets(kinds, _kinds(x)) for y in vb if _meets(_kinds(x), _kinds(y), kinds)]
    if kinds == {"object"} and len(va) * len(vb) > 1:  # only objects: drop pairs their names rule out
        from .products import pair_filter  # (products reads one_of, which reads this module)

        can_meet = pair_filter(read(dict(out)), read)  # (a copy: ``out`` is still being written)
        pairs = [(x, y) for x, y in pairs if can_meet(x, y)]
    if len(pairs) > 256:
        raise UnsupportedKeyword(pointer, "anyOf", "more than 256 combined branches in allOf")
    return [both(x, y) for x, y in pairs] or [False]


def exactly_one(branches: list, overlaps: list | None = None) -> list:
    """``oneOf`` as a union of branches that exclude each other: branch i and not any other it
    might overlap (``overlaps[i]``, all others when not given)."""
    out = []
    for i, b in enumerate(branches):
        others = [o for j, o in enumerate(branches) if j != i and (overlaps is None or j in overlaps[i])]
        if not others:
            out.append(b)
        elif isinstance(b, dict) and not b.keys() & {"not", "$ref"}:  # beside the branch's own keywords,
            out.append({**b, "not": {"anyOf": others}})  # so its properties keep their place in the order
        else:
            out.append({"allOf": [b, {"not": {"anyOf": others}}]})
    return out


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _merge_properties(a: dict, b: dict, matches, alike: bool) -> dict:
    """Names from both; a name one side lacks meets that side's additionalProperties, unless one
    of its patternProperties matches the name (the lowering meets a named property with those),
    and each of its ``_additional_unless`` whose patterns it matches none of."""
    pa, pb = a.get("properties", {}), b.get("properties", {})

    def side(schema, props, name):
        if name in props:
            return props[name]
        if any(matches(p, name) for p in schema.get("patternProperties", {})):
            found = True
        else:
            found = schema.get("additionalProperties", True)
        for unless in schema.get("_additional_unless", ()):
            if not any(matches(p, name) for p in unless["patterns"]):
                found = both(found, unless["value"])
        return found

    def meet(x, y):
        return False if alike and (_negation_of(x, y) or _negation_of(y, x)) else both(x, y)

    return {name: meet(side(a, pa, name), side(b, pb, name)) for name in list(pa) + [n for n in pb if n not in pa]}


def _array_form(schema: dict) -> tuple[list, object]:
    """(per-position schemas, schema of the rest), from either draft's keywords."""
    if isinstance(schema.get("items"), list):
        return schema["items"], schema.get("additionalItems", True)
    return schema.get("prefixItems", []), schema.get("items", True)


def _merge_arrays(a: dict, b: dict, out: dict) -> None:
    """Each position meets what each side says of that position (its prefix item, or its items)."""
    pa, ia = _array_form(a)
    pb, ib = _array_form(b)
    prefix = [both(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(max(len(pa), len(pb)))]
    for key in ("items", "prefixItems", "additionalItems"):
        out.pop(key, None)
    if prefix:
        out["prefixItems"] = prefix
    out["items"] = both(ia, ib)


def _merge_counts(a: dict, b: dict, out: dict) -> None:
    """``minContains``/``maxContains`` met with their ``contains``: a count beside no ``contains``
    says nothing; the same ``contains`` on both sides is matched between the larger least and the
    smaller most (a side that says no least needs 1). Different ones beside a count were refused."""
    out.pop("minContains", None)
    out.pop("maxContains", None)
    sides = [side for side in (a, b) if "contains" in side]
    if not sides:
        return
    least = max(side.get("minContains", 1) for side in sides)
    mosts = [side["maxContains"] for side in sides if "maxContains" in side]
    if least != 1:
        out["minContains"] = least
    if mosts:
        out["maxContains"] = min(mosts)
