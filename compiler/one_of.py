"""``oneOf`` made exact where it can be proven: "exactly one branch" becomes a union of branches.

The proof goes type by type. For each JSON type, look at the branches that admit values of it:
- two or more that put no constraint at all on that type (``{"required": [...]}`` says nothing
  about strings) both match every such value, so no value of that type satisfies the ``oneOf``:
  the type is removed from every branch;
- otherwise every pair must be disjoint on that type: distinct literal values, or for objects a
  name one branch requires whose value the other branch pins to different literals (or forbids).
If neither holds for some type, the ``oneOf`` is refused rather than widened. The branches are
read as nodes (``ir.Node``, ``build.Reader.of``), a lone ``$ref`` followed to its target.
"""

from __future__ import annotations

from .errors import SchemaError
from .ir import ANY, FOLLOW_MAX, NEVER, Node, ObjectRules, literal_values, lone_ref, make, says_only
from .values import json_in
from . import chardfa
from .regex import either_dfa

KINDS = ("null", "boolean", "object", "array", "string", "number")


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def pinned_values(node: Node) -> list | None:
    """The values ``node`` may take by its literals, through the ``allOf`` wrappers of lazy meets
    (``merge.both``): a superset of the values it allows (None: no literal pins it)."""
    values = literal_values(node)
    for part in node.all_of:
        inner = pinned_values(part)
        if inner is not None:
            values = inner if values is None else [v for v in values if json_in(v, inner)]
    return values


def followed(node: Node) -> Node:
    """``node`` with a lone ``$ref`` followed (a chain of them), as the lowering calls the target."""
    for _ in range(FOLLOW_MAX):
        if not lone_ref(node):
            break
        node = node.ref
    return node



def _parts(node: Node) -> list:
    """What holds beside ``node``'s own keywords: its ``allOf`` branches and a ``$ref`` beside them."""
    return [*node.all_of, *([node.ref] if node.ref is not None else [])]


def _admitted_kinds(node: Node, depth: int = 0, memo: dict | None = None) -> set[str]:
    """The JSON types ``node`` may admit (a superset): its ``type`` and literals, and those of its
    ``allOf`` parts and ``$ref`` (every part holds). Each node is read once per ``memo`` (as
    ``_object_facts``: one on the way down admits every type)."""
    memo = {} if memo is None else memo
    return _once(memo, node, set(KINDS), lambda: _read_admitted_kinds(node, depth, memo))


def _once(memo: dict, node, busy, read):
    """``read()``, once per node and ``memo``; ``busy`` while it is being read (a node met again
    on the way down)."""
    if id(node) not in memo:
        memo[id(node)] = busy
        memo[id(node)] = read()
    return memo[id(node)]


def _read_admitted_kinds(node: Node, depth: int, memo: dict) -> set[str]:
    node = followed(node)
    if node is NEVER:
        return set()
    kinds = set(KINDS) if node.types is None else {"number" if k == "integer" else k for k in node.types}
    values = pinned_values(node)
    if values is not None:
        kinds &= {_kind(v) for v in values}
    for part in _parts(node) if depth < 8 else ():
        kinds &= _admitted_kinds(part, depth + 1, memo)
    return kinds


def _unconstrained(node: Node, kind: str) -> bool:
    """Every value of ``kind`` satisfies ``node``."""
    if literal_values(node) is not None or not says_only(node, _SAYS_OF[kind]):
        return False
    return node.types is None or kind in node.types


# what a node may say and still take every value of a type: its types, and what it says of other
# types alone (their facets; formats are of strings)
_SAYS_OF = {kind: frozenset({"types", *({"string", "number", "object", "array"} - {kind}),
                             *(["formats"] if kind != "string" else [])}) for kind in KINDS}


def _disjoint(a: Node, b: Node, kind: str, facts_a: tuple, facts_b: tuple) -> bool:
    la, lb = pinned_values(a), pinned_values(b)
    if la is not None and lb is not None:
        return not any(json_in(x, lb) for x in la if _kind(x) == kind)
    if kind == "string":
        return _texts_disjoint(la, _pattern(a), lb, _pattern(b))
    if kind != "object":
        return False
    return _object_disjoint(facts_a, b, facts_b) or _object_disjoint(facts_b, a, facts_a)


def _pattern(node: Node) -> str | None:
    """A pattern every string ``node`` allows matches (None: none; of several, each holds, so any one will do)."""
    return node.string.patterns[0] if node.string is not None and node.string.patterns else None


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


def _object_disjoint(facts_a: tuple, b: Node, facts_b: tuple) -> bool:
    """A name ``a`` requires that ``b`` pins to other literals, or does not allow at all (each side
    read through its ``allOf`` parts and ``$ref``s: ``_object_facts``)."""
    required, pins_a, texts_a = facts_a
    pins_b, texts_b = facts_b[1], facts_b[2]
    obj = b.object or ObjectRules()
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
        elif name not in obj.properties and not _may_match([p for p, _ in obj.pattern_properties], name):
            extra = obj.additional or ANY  # an additional name of b
            lb = [] if extra is NEVER else pinned_values(extra)
            la = pins_a.get(name)
            if lb == [] or (lb is not None and la is not None and not any(json_in(x, lb) for x in la)):
                return True
    return False


def _may_match(patterns: list, name: str) -> bool:
    """Whether some validator might match one of ``patterns`` (patternProperties) on ``name``
    (either regex reading; a pattern we cannot read might)."""
    for pattern in patterns:
        try:
            if either_dfa(pattern).matches(name):
                return True
        except SchemaError:
            return True
    return False


_NO_FACTS = (frozenset(), {}, {})


def _object_facts(node: Node, depth: int = 0, memo: dict | None = None) -> tuple[set, dict, dict]:
    """The names ``node`` requires; for the names whose values it pins to literals, a superset of
    the values it allows (``[]``: the name is not allowed); for those whose values must be strings
    matching a pattern, that pattern; read through its ``allOf`` parts (every part holds), its
    ``anyOf``/``oneOf`` branches (what all of them say) and its ``$ref``s. Each node is read once
    per ``memo`` (one on the way down says nothing: a loop, or shared parts met again), so
    references fanning out many times over cost what the schemas do."""
    memo = {} if memo is None else memo
    return _once(memo, node, _NO_FACTS, lambda: _read_object_facts(node, depth, memo))


def _read_object_facts(node: Node, depth: int, memo: dict) -> tuple[set, dict, dict]:
    required: set = set()
    pins: dict = {}
    texts: dict = {}
    node = followed(node)
    if depth > 8:
        return required, pins, texts
    if node.object is not None:
        required.update(node.object.required)
        for name, sub in node.object.properties.items():
            sub = followed(sub)
            values = [] if sub is NEVER else pinned_values(sub)
            if values is not None:
                pins[name] = values
            if sub.types == ("string",) and (pattern := _pattern(sub)) is not None:
                texts[name] = pattern
    for part in _parts(node):
        more, inner, covers = _object_facts(part, depth + 1, memo)
        required |= more
        texts = {**covers, **texts}  # (every part holds: any one's pattern will do)
        for name, values in inner.items():
            pins[name] = values if name not in pins else [v for v in pins[name] if json_in(v, values)]
    for branches in (node.any_of, node.one_of):  # what holds in every branch holds of the schema
        if branches:
            every = [_object_facts(b, depth + 1, memo) for b in branches]
            required |= set.intersection(*(more for more, _, _ in every))
            for name in set.intersection(*(set(inner) for _, inner, _ in every)):
                values = [v for _, inner, _ in every for v in inner[name]]
                pins[name] = values if name not in pins else [v for v in pins[name] if json_in(v, values)]
    return required, pins, texts


def _read(branches: list) -> tuple[list, list[set[str]], list[tuple]]:
    """Each branch's node (a top-level ``$ref`` followed), the types it admits and its ``_object_facts``."""
    nodes = [followed(b) for b in branches]
    kinds_memo: dict = {}
    facts_memo: dict = {}
    return nodes, [_admitted_kinds(n, 0, kinds_memo) for n in nodes], [_object_facts(n, 0, facts_memo) for n in nodes]


def exact_branches(branches: list) -> list | None:
    """The branches, each narrowed (as a node) to the types where it is the only match; ``None``
    if unproven."""
    nodes, kinds, facts = _read(branches)
    keep = [set(k) for k in kinds]
    for kind in KINDS:
        admitting = [i for i, ks in enumerate(kinds) if kind in ks]
        if len(admitting) < 2:
            continue
        free = [i for i in admitting if _unconstrained(nodes[i], kind)]
        if len(free) >= 2:
            for i in admitting:
                keep[i].discard(kind)
            continue
        for x, i in enumerate(admitting):
            for j in admitting[x + 1:]:
                if not _disjoint(nodes[i], nodes[j], kind, facts[i], facts[j]):
                    return None
    out = []
    for branch, before, after in zip(branches, kinds, keep):
        if not after:
            continue
        if after == before:
            out.append(branch)
        else:
            types = sorted(after | ({"integer"} if "number" in after else set()))
            out.append(make(all_of=[branch, make(types=tuple(types))]))
    return out


def overlaps(branches: list) -> list[set[int]]:
    """For each branch, the other branches a value might meet too (not proven disjoint from it):
    exactly one holds when a branch does and none of those do, the rest being ruled out already."""
    nodes, kinds, facts = _read(branches)
    out: list[set[int]] = [set() for _ in branches]
    for i, a in enumerate(nodes):
        for j in range(i + 1, len(nodes)):
            b = nodes[j]
            common = kinds[i] & kinds[j]
            if any(a is ANY or b is ANY or not _disjoint(a, b, k, facts[i], facts[j]) for k in common):
                out[i].add(j)
                out[j].add(i)
    return out
