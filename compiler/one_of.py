"""``oneOf`` made exact where it can be proven: "exactly one branch" becomes a union of branches.

The proof goes type by type. For each JSON type, look at the branches that admit values of it:
- two or more that put no constraint at all on that type (``{"required": [...]}`` says nothing
  about strings) both match every such value, so no value of that type satisfies the ``oneOf``:
  the type is removed from every branch;
- otherwise every pair must be disjoint on that type: distinct literal values, or for objects a
  name one branch requires whose value the other branch pins to different literals (or forbids).
If neither holds for some type, the ``oneOf`` is refused rather than widened.
"""

from __future__ import annotations

from .errors import SchemaError
from .keywords import MARKERS, TYPES
from .merge import constraints, json_in
from . import chardfa
from .regex import either_dfa

APPLIES = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "object": {"properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties",
               "propertyNames"},
    "array": {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains", "minContains", "maxContains"},
    "boolean": set(),
    "null": set(),
}
OPAQUE = {"anyOf", "oneOf", "allOf", "not", "$ref", "if", "then", "else", "dependentRequired", "dependentSchemas",
          "dependencies", *MARKERS}
KINDS = ("null", "boolean", "object", "array", "string", "number")


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def literal_values(rules: dict) -> list | None:
    """The values ``enum`` and ``const`` allow together (None: neither is there)."""
    if "enum" in rules or "const" in rules:
        values = list(rules.get("enum", [rules.get("const")]))
        if "const" in rules and "enum" in rules:
            values = [v for v in values if json_in(v, [rules["const"]])]
        return values
    return None


def pinned_values(rules: dict) -> list | None:
    """The values ``rules`` may take by its literals, through the ``allOf`` wrappers of lazy meets
    (``merge.both``): a superset of the values it allows (None: no literal pins it)."""
    values = literal_values(rules)
    parts = rules.get("allOf")
    for part in parts if isinstance(parts, list) else ():
        inner = pinned_values(part) if isinstance(part, dict) else None
        if inner is not None:
            values = inner if values is None else [v for v in values if json_in(v, inner)]
    return values


def _as_read(rules, resolve):
    """``rules`` as its draft reads it (a lone ``$ref`` followed, with ``resolve``) and the parts that
    hold beside it: its ``allOf`` branches and, with ``resolve``, a ``$ref`` beside other keywords."""
    if resolve is not None and isinstance(rules, dict):
        rules = resolve(rules)
    if not isinstance(rules, dict):
        return rules, []
    parts = list(rules["allOf"]) if isinstance(rules.get("allOf"), list) else []
    if resolve is not None and "$ref" in rules:
        parts.append({"$ref": rules["$ref"]})
    return rules, parts


def _admitted_kinds(rules, resolve=None, depth: int = 0, memo: dict | None = None) -> set[str]:
    """The JSON types ``rules`` may admit (a superset): its ``type`` and literals, and with ``resolve``
    those of its ``allOf`` parts and ``$ref`` (every part holds). Each schema object is read once
    per ``memo`` (as ``_object_facts``: one on the way down admits every type)."""
    memo = {} if memo is None else memo
    return _once(memo, rules, set(KINDS), lambda: _read_admitted_kinds(rules, resolve, depth, memo))


def _once(memo: dict, rules, busy, read):
    """``read()``, once per schema object and ``memo``; ``busy`` while it is being read (a schema
    met again on the way down)."""
    if id(rules) not in memo:
        memo[id(rules)] = (rules, busy)
        memo[id(rules)] = (rules, read())
    return memo[id(rules)][1]


def _read_admitted_kinds(rules, resolve, depth: int, memo: dict) -> set[str]:
    rules, parts = _as_read(rules, resolve)
    if rules is True or not isinstance(rules, dict):
        return set(KINDS) if rules is not False else set()
    declared = rules.get("type")
    kinds = set(KINDS) if declared is None else ({declared} if isinstance(declared, str) else set(declared))
    kinds = {"number" if k == "integer" else k for k in kinds if k in TYPES}
    values = pinned_values(rules)
    if values is not None:
        kinds &= {_kind(v) for v in values}
    for part in parts if resolve is not None and depth < 8 else ():
        kinds &= _admitted_kinds(part, resolve, depth + 1, memo)
    return kinds


def _unconstrained(rules, kind: str) -> bool:
    """Every value of ``kind`` satisfies ``rules``."""
    if rules is True:
        return True
    if literal_values(rules) is not None or rules.keys() & OPAQUE or rules.keys() & APPLIES[kind]:
        return False
    declared = rules.get("type")
    return declared is None or kind in ([declared] if isinstance(declared, str) else declared)


def _disjoint(a, b, kind: str, facts_a: tuple, facts_b: tuple) -> bool:
    la, lb = pinned_values(a), pinned_values(b)
    if la is not None and lb is not None:
        return not any(json_in(x, lb) for x in la if _kind(x) == kind)
    if kind == "string":
        return _texts_disjoint(la, _pattern(a), lb, _pattern(b))
    if kind != "object":
        return False
    return _object_disjoint(facts_a, b, facts_b) or _object_disjoint(facts_b, a, facts_a)


def _pattern(rules) -> str | None:
    """A pattern every string ``rules`` allows matches (None: none)."""
    pattern = rules.get("pattern") if isinstance(rules, dict) else None
    if isinstance(pattern, tuple):  # gathered by a meet: each holds, so any one will do
        pattern = pattern[0] if pattern else None
    return pattern if isinstance(pattern, str) else None


def _texts_disjoint(values_a, pattern_a, values_b, pattern_b) -> bool:
    """Whether no string is on both sides, each known by its literals (a superset) or a pattern
    (either may be None: not known), the patterns read as every validator might (``either_dfa``)."""
    try:
        if pattern_a is not None and pattern_b is not None:
            return not chardfa.meets(either_dfa(pattern_a), either_dfa(pattern_b))
        for values, pattern in ((values_a, pattern_b), (values_b, pattern_a)):
            if values is not None and pattern is not None:
                cover = either_dfa(pattern)
                return not any(isinstance(v, str) and cover.matches(v) for v in values)
    except (SchemaError, OverflowError):
        pass
    return False


def _object_disjoint(facts_a: tuple, b: dict, facts_b: tuple) -> bool:
    """A name ``a`` requires that ``b`` pins to other literals, or does not allow at all (each side
    read through its ``allOf`` parts and ``$ref``s: ``_object_facts``)."""
    required, pins_a, texts_a = facts_a
    pins_b, texts_b = facts_b[1], facts_b[2]
    for name in required:
        if (name in texts_a or name in texts_b) and _texts_disjoint(
                pins_a.get(name), texts_a.get(name), pins_b.get(name), texts_b.get(name)):
            return True  # its value a string one side's pattern rules out (every reading)
        if name in pins_b:
            lb = pins_b[name]
            if lb == []:
                return True
            la = pins_a.get(name)
            if la is not None and not any(json_in(x, lb) for x in la):
                return True
        elif name not in (b.get("properties") or {}) and not _may_match(b.get("patternProperties"), name):
            extra = b.get("additionalProperties", True)  # an additional name of b
            lb = [] if extra is False else pinned_values(extra) if isinstance(extra, dict) else None
            la = pins_a.get(name)
            if lb == [] or (lb is not None and la is not None and not any(json_in(x, lb) for x in la)):
                return True
    return False


def _may_match(patterns, name: str) -> bool:
    """Whether some validator might match one of ``patterns`` (patternProperties) on ``name``
    (either regex reading; a pattern we cannot read might)."""
    if not patterns:
        return False
    if not isinstance(patterns, dict):
        return True
    for pattern in patterns:
        try:
            if either_dfa(pattern).matches(name):
                return True
        except SchemaError:
            return True
    return False


_NO_FACTS = (frozenset(), {}, {})


def _object_facts(rules, resolve=None, depth: int = 0, memo: dict | None = None) -> tuple[set, dict, dict]:
    """The names ``rules`` requires; for the names whose values it pins to literals, a superset of
    the values it allows (``[]``: the name is not allowed); for those whose values must be strings
    matching a pattern, that pattern; read through its ``allOf`` parts (every
    part holds), its ``anyOf``/``oneOf`` branches (what all of them say) and, with ``resolve`` (a
    schema as its draft reads it, a lone ``$ref`` followed), through its ``$ref``s. Each schema
    object is read once per ``memo`` (one on the way down says nothing: a loop, or shared parts
    met again), so references fanning out many times over cost what the schemas do."""
    memo = {} if memo is None else memo
    return _once(memo, rules, _NO_FACTS, lambda: _read_object_facts(rules, resolve, depth, memo))


def _read_object_facts(rules, resolve, depth: int, memo: dict) -> tuple[set, dict, dict]:
    required: set = set()
    pins: dict = {}
    texts: dict = {}
    rules, parts = _as_read(rules, resolve)
    if not isinstance(rules, dict) or depth > 8:
        return required, pins, texts
    names = rules.get("required", [])
    if isinstance(names, list):
        required.update(n for n in names if isinstance(n, str))
    for name, sub in (rules.get("properties") or {}).items():
        if resolve is not None and isinstance(sub, dict):
            sub = resolve(sub)
        values = [] if sub is False else pinned_values(sub) if isinstance(sub, dict) else None
        if values is not None:
            pins[name] = values
        if isinstance(sub, dict) and sub.get("type") in ("string", ["string"]) and (pattern := _pattern(sub)) is not None:
            texts[name] = pattern
    for part in parts:
        more, inner, covers = _object_facts(part, resolve, depth + 1, memo)
        required |= more
        texts = {**covers, **texts}  # (every part holds: any one's pattern will do)
        for name, values in inner.items():
            pins[name] = values if name not in pins else [v for v in pins[name] if json_in(v, values)]
    for keyword in ("anyOf", "oneOf"):  # what holds in every branch holds of the schema
        branches = rules.get(keyword)
        if isinstance(branches, list) and branches:
            every = [_object_facts(b, resolve, depth + 1, memo) for b in branches]
            required |= set.intersection(*(more for more, _, _ in every))
            for name in set.intersection(*(set(inner) for _, inner, _ in every)):
                values = [v for _, inner, _ in every for v in inner[name]]
                pins[name] = values if name not in pins else [v for v in pins[name] if json_in(v, values)]
    return required, pins, texts


def _read(branches: list, resolve) -> tuple[list, list[set[str]], list[tuple]]:
    """Each branch's constraints (a top-level ``$ref`` followed), the types it admits and its
    ``_object_facts``."""
    rules = [resolve(b) for b in branches]
    rules = [r if isinstance(r, bool) else constraints(r) for r in rules]
    kinds_memo: dict = {}
    facts_memo: dict = {}
    return (rules, [_admitted_kinds(r, resolve, 0, kinds_memo) for r in rules],
            [_object_facts(r, resolve, 0, facts_memo) for r in rules])


def exact_branches(branches: list, resolve) -> list | None:
    """The branches, each narrowed to the types where it is the only match; ``None`` if unproven.

    ``resolve(branch)`` gives the branch's constraints with a top-level ``$ref`` followed.
    """
    rules, kinds, facts = _read(branches, resolve)
    keep = [set(k) for k in kinds]
    for kind in KINDS:
        admitting = [i for i, ks in enumerate(kinds) if kind in ks]
        if len(admitting) < 2:
            continue
        free = [i for i in admitting if _unconstrained(rules[i], kind)]
        if len(free) >= 2:
            for i in admitting:
                keep[i].discard(kind)
            continue
        for x, i in enumerate(admitting):
            for j in admitting[x + 1:]:
                if not _disjoint(rules[i], rules[j], kind, facts[i], facts[j]):
                    return None
    out = []
    for branch, before, after in zip(branches, kinds, keep):
        if not after:
            continue
        if after == before:
            out.append(branch)
        else:
            types = sorted(after | ({"integer"} if "number" in after else set()))
            out.append({"allOf": [branch, {"type": types}]})
    return out


def overlaps(branches: list, resolve) -> list[set[int]]:
    """For each branch, the other branches a value might meet too (not proven disjoint from it):
    exactly one holds when a branch does and none of those do, the rest being ruled out already."""
    rules, kinds, facts = _read(branches, resolve)
    out: list[set[int]] = [set() for _ in branches]
    for i, a in enumerate(rules):
        for j in range(i + 1, len(rules)):
            b = rules[j]
            common = kinds[i] & kinds[j]
            if any(isinstance(a, bool) or isinstance(b, bool) or not _disjoint(a, b, k, facts[i], facts[j]) for k in common):
                out[i].add(j)
                out[j].add(i)
    return out
