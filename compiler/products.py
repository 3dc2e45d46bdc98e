"""Which pairs of an ``allOf``'s ``anyOf`` product can hold together, by what they pin on an object.

Each ``if``/``then`` becomes an ``anyOf`` of two cases (``boolean.expand``), and an ``allOf`` of k
of them a product of 2**k branches: a chain of discriminated conditionals (``if`` ``kind`` is "a"
``then`` ..., one per kind) passed 256 at eight. Most of those branches are empty: "``kind`` is "a"
or absent" and "``kind`` is present and not "b"" and "``kind`` is "b" or absent" cannot all hold.
Reading each branch's names (required, pinned to literals, ruled out by a ``not`` of such a test)
proves it, so the product keeps k + 2 branches. Only what a branch surely implies is read; anything
else is left to the lowering, so a pair kept may still be empty, never the other way round.
"""

from __future__ import annotations

from collections import OrderedDict

from .merge import constraints, json_in, literals

# names required; per name, the literals its value may be (a superset) and those it may not be, as keys
Facts = tuple[frozenset, dict, dict]
NOTHING: Facts = (frozenset(), {}, {})
# id -> (the schema, kept alive so that its id stays its own; its facts), for one compile: a schema
# the caller changes between two compiles must be read again (``forget``)
_KNOWN: OrderedDict[int, tuple[object, Facts]] = OrderedDict()
MAX_KNOWN = 4096
MAX_NESTING = 256


def pair_filter(met):
    """``can_meet(x, y)``: whether some object may satisfy ``met`` (what the ``allOf`` met so far,
    read now: it is still being built), ``x`` and ``y`` together, as far as their facts tell."""
    known = _facts(met, 0, keep=False)

    def can_meet(x, y) -> bool:
        required, pins, excluded = _combined([known, _facts(x, 0), _facts(y, 0)])
        return not any(name in pins and not pins[name] - excluded.get(name, frozenset()) for name in required)

    return can_meet


def forget() -> None:
    """Drop every schema's facts (a compile starts)."""
    _KNOWN.clear()


def _combined(parts: list[Facts]) -> Facts:
    required: frozenset = frozenset()
    pins: dict = {}
    excluded: dict = {}
    for names, pinned, ruled_out in parts:
        required |= names
        for name, keys in pinned.items():
            pins[name] = keys if name not in pins else pins[name] & keys
        for name, keys in ruled_out.items():
            excluded[name] = keys if name not in excluded else excluded[name] | keys
    return required, pins, excluded


def _key(value):
    """A hashable key equal for JSON-equal scalars (1 and 1.0 alike, ``true`` apart from 1); None for
    arrays and objects, which are left unread."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    return None


def _keys(values) -> frozenset | None:
    keys = [_key(v) for v in values]
    return None if None in keys else frozenset(keys)


def _facts(schema, depth: int, keep: bool = True) -> Facts:
    """What ``schema`` surely says of an object's names, read through its ``allOf`` parts; kept per
    schema object, as each fold of a product reads the branches of the fold before."""
    if not isinstance(schema, dict) or depth > MAX_NESTING:
        return NOTHING
    known = _KNOWN.get(id(schema)) if keep else None
    if known is not None:
        return known[1]
    rules = constraints(schema)
    names = rules.get("required")
    required = frozenset(n for n in names if isinstance(n, str)) if isinstance(names, list) else frozenset()
    pins: dict = {}
    props = rules.get("properties")
    for name, sub in props.items() if isinstance(props, dict) else ():
        values = [] if sub is False else _pinned(sub) if isinstance(sub, dict) else None
        keys = _keys(values) if values is not None else None
        if keys is not None:
            pins[name] = keys
    parts = rules.get("allOf")
    found = [(required, pins, {})] + [_facts(part, depth + 1) for part in parts if isinstance(part, dict)] if isinstance(
        parts, list) else [(required, pins, {})]
    if "not" in rules:
        found.append(_negated(rules["not"]))
    facts = _combined(found)
    if keep:
        _KNOWN[id(schema)] = (schema, facts)
        if len(_KNOWN) > MAX_KNOWN:
            try:
                _KNOWN.popitem(last=False)
            except KeyError:  # another thread's compile started and cleared it meanwhile
                pass
    return facts


def _pinned(rules: dict) -> list | None:
    """The values ``rules`` may take by its literals, through the ``allOf`` wrappers of lazy meets
    (a superset; None: no literal pins it). (``one_of.pinned_values`` on a node: these schemas are
    read while ``merge`` writes them, before any node is.)"""
    values = literals(rules)
    for part in rules.get("allOf") or ():
        inner = _pinned(part) if isinstance(part, dict) else None
        if inner is not None:
            values = inner if values is None else [v for v in values if json_in(v, inner)]
    return values


def _negated(test) -> Facts:
    """What ``not test`` says of an object where ``test`` pins exactly one name to literals and says
    nothing else (an ``if`` on a discriminator): that name's value is none of them, and it is present
    unless ``test`` required it. Anything else: nothing known."""
    if not isinstance(test, dict):
        return NOTHING
    rules = constraints(test)
    props = rules.get("properties")
    if not (isinstance(props, dict) and len(props) == 1 and rules.keys() <= {"properties", "required", "type"}
            and rules.get("type", "object") in ("object", ["object"])):
        return NOTHING
    (name, sub), = props.items()
    if sub is False:
        keys: frozenset | None = frozenset()
    elif isinstance(sub, dict) and constraints(sub).keys() <= {"const", "enum"} and literals(sub) is not None:
        keys = _keys(literals(sub))  # exactly the values the test lets through
    else:
        return NOTHING
    if keys is None or rules.get("required", []) not in ([], [name]):
        return NOTHING
    return (frozenset() if rules.get("required") else frozenset([name])), {}, {name: keys}
