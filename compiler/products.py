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

from .ir import NEVER, Node, ObjectRules, literal_values, says_only
from .one_of import pinned_values

# names required; per name, the literals its value may be (a superset) and those it may not be, as keys
Facts = tuple[frozenset, dict, dict]
NOTHING: Facts = (frozenset(), {}, {})
# id -> (the node, kept alive so that its id stays its own; its facts), for one compile (``forget``)
_KNOWN: OrderedDict[int, tuple[object, Facts]] = OrderedDict()
MAX_KNOWN = 4096
MAX_NESTING = 256


def pair_filter(met: Node, read):
    """``can_meet(x, y)``: whether some object may satisfy ``met`` (what the ``allOf`` met so far,
    read now: it is still being built), ``x`` and ``y`` together, as far as their facts tell;
    ``read(schema)``: a branch's node (``build.Reader.of``)."""
    known = _facts(met, 0, keep=False)

    def can_meet(x, y) -> bool:
        required, pins, excluded = _combined([known, _facts(read(x), 0), _facts(read(y), 0)])
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


def _facts(node: Node, depth: int, keep: bool = True) -> Facts:
    """What ``node`` surely says of an object's names, read through its ``allOf`` parts; kept per
    node, as each fold of a product reads the branches of the fold before."""
    if depth > MAX_NESTING:
        return NOTHING
    known = _KNOWN.get(id(node)) if keep else None
    if known is not None:
        return known[1]
    obj = node.object or ObjectRules()
    pins: dict = {}
    for name, sub in obj.properties.items():
        values = [] if sub is NEVER else pinned_values(sub)
        keys = _keys(values) if values is not None else None
        if keys is not None:
            pins[name] = keys
    found = [(frozenset(obj.required), pins, {})] + [_facts(part, depth + 1) for part in node.all_of]
    if node.not_ is not None:
        found.append(_negated(node.not_))
    facts = _combined(found)
    if keep:
        _KNOWN[id(node)] = (node, facts)
        if len(_KNOWN) > MAX_KNOWN:
            try:
                _KNOWN.popitem(last=False)
            except KeyError:  # another thread's compile started and cleared it meanwhile
                pass
    return facts


def _negated(test: Node) -> Facts:
    """What ``not test`` says of an object where ``test`` pins exactly one name to literals and says
    nothing else (an ``if`` on a discriminator): that name's value is none of them, and it is present
    unless ``test`` required it. Anything else: nothing known."""
    obj = test.object
    if not (obj is not None and len(obj.properties) == 1 and says_only(test, _TEST) and says_only(obj, _TEST_OBJECT)
            and test.types in (None, ("object",))):
        return NOTHING
    (name, sub), = obj.properties.items()
    if sub is NEVER:
        keys: frozenset | None = frozenset()
    elif says_only(sub, _LITERAL) and literal_values(sub) is not None:
        keys = _keys(literal_values(sub))  # exactly the values the test lets through
    else:
        return NOTHING
    if keys is None or obj.required not in ([], [name]):
        return NOTHING
    return (frozenset() if obj.required else frozenset([name])), {}, {name: keys}


_TEST, _TEST_OBJECT, _LITERAL = frozenset({"types", "object"}), frozenset({"properties", "required"}), frozenset({"enum", "const"})
