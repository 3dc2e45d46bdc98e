"""The schema as it applies, typed: what ``build`` makes of a document and what ``validate`` walks.

A `Node` is one schema object read the way its draft reads it. Keywords the draft does not have
are absent, and a draft 3 to 7 ``$ref`` has no siblings (``SchemaDocument`` reads the document so
at load). Draft 4's boolean exclusive bounds sit on their bound. ``items`` is split into the prefix and the rest, and draft 7's ``dependencies`` into
required names and schemas. Subschemas are nodes (a ``$ref`` holds its target's node), so a
recursive schema is a cyclic graph, and a subschema reached twice is one node. ``true`` and
``false`` are the nodes `ANY` and `NEVER`.

Keywords that speak to one JSON type only are grouped in a facet (`StringRules`, `NumberRules`,
`ObjectRules`, `ArrayRules`), None where the schema says nothing of that type. Every field has a
class-level default and a node sets only what its schema says: most schemas say little, and a
node is made for each one a compile reaches.

The meet (``merge.py``) and the complement (``boolean.py``) make nodes (``make``): where schemas
meet, patterns, formats and steps gather, and a complement's leaves are the fields marked "a
complement's"; an empty ``types`` or ``any_of`` (what is left where nothing meets) allows no value.
The lowering, its validator of literals (``Validator.of_nodes``) and the unevaluated keywords'
rewrite read nodes alone: a node is never written back as a schema object.
"""

from __future__ import annotations

from .values import json_equal

ABSENT = object()
"""``Node.const`` where the schema has no ``const`` (None is the JSON value null)."""


class StringRules:
    min_length = None
    max_length = None
    patterns: tuple = ()               # each pattern that applies (a schema has one, a meet gathers more)
    not_patterns: tuple = ()           # a complement's: patterns no string may match
    not_formats: tuple = ()            # a complement's: formats no string may conform to


class NumberRules:
    """Bounds as written (draft 4's flags already moved onto them), None where absent."""
    minimum = None
    maximum = None
    exclusive_minimum = None
    exclusive_maximum = None
    multiples: tuple = ()              # each multipleOf that applies (a schema has one, a meet gathers more)
    not_multiples: tuple = ()          # a complement's: steps no number may be a multiple of
    not_integer = False                # a complement's: no integer

    @property
    def bounds(self) -> tuple:
        """``(minimum, maximum, exclusive_minimum, exclusive_maximum)``, each None where absent."""
        return self.minimum, self.maximum, self.exclusive_minimum, self.exclusive_maximum


class ObjectRules:
    required: list = []
    min_properties = None
    max_properties = None
    property_names: Node | None = None
    properties: dict = {}              # name -> Node
    pattern_properties: list = []      # (pattern, Node)
    additional: Node | None = None     # additionalProperties, None where absent
    dependent: list = []               # (name, list of names | Node) where the name is present
    dependent_schemas: dict = {}       # dependentSchemas alone (what unevaluatedProperties sees)
    # a complement's: for each entry, some member with a key the entry names and a value meeting
    # its node: ("names", Node, value) a key that Node refuses; ("pattern", str, value) a key it
    # matches; ("outside", (names, patterns), value) a key none of them names or matches
    some_member: list = []
    # a meet's: each side's additionalProperties, as (that side's patterns, Node): a key outside
    # the names that matches none of the patterns meets the Node (``merge``, where the sides differ)
    additional_unless: list = []


class ArrayRules:
    min_items = None
    max_items = None
    prefix: list = []                  # Nodes, the first items (prefixItems, or a list ``items``)
    rest: Node | None = None           # the items after the prefix, None for any
    listed = False                     # the prefix is a list ``items`` (drafts 4 to 2019-09), the rest additionalItems
    contains: Node | None = None
    min_contains = 1
    max_contains = None
    contains_also: list = []           # more Nodes, each matched by some item (contains met with contains)
    unique = False                     # uniqueItems: true


class Node:
    source: object = None              # the schema object as written (the holder of a ``$ref``)
    path = None                        # linked path (``refs.pointer_of``) of where it was first reached
    via: tuple = ()                    # the ``$ref``s that led there
    types: tuple | None = None         # the listed type names, None where ``type`` is absent
    enum: list | None = None
    const = ABSENT
    formats: tuple = ()                # each format that applies (a schema has one, a meet gathers more)
    not_values: list = []              # a complement's: values ruled out
    string: StringRules | None = None
    number: NumberRules | None = None
    object: ObjectRules | None = None
    array: ArrayRules | None = None
    ref: Node | None = None            # the ``$ref`` target
    ref_text: str | None = None
    ref_pointer: str = ""              # the target's JSON pointer (where its problems are worded)
    all_of: list = []
    any_of: list | None = None
    one_of: list | None = None
    one_of_first = False               # ``oneOf`` written before ``properties``: its names come first (``alive.py``)
    not_: Node | None = None
    if_: Node | None = None
    then: Node | None = None
    else_: Node | None = None
    unevaluated: bool = False          # whether unevaluatedProperties or unevaluatedItems applies
    unevaluated_properties: Node | None = None
    unevaluated_items: Node | None = None

    def __repr__(self) -> str:
        return f"<Node {self.source!r:.60}>"


ANY = Node()
ANY.source = True
NEVER = Node()
NEVER.source = False


_WHERE = frozenset(("source", "path", "via", "ref", "ref_pointer"))  # where a node was met, not what it says (a $ref by its text)
_REF_TEXT = frozenset({"ref_text"})
FOLLOW_MAX = 64  # lone references followed in a row (``build`` refuses a loop of them)


def make(**fields) -> Node:
    """A node saying ``fields``, a facet given as a dict of its own (``number={"not_integer": True}``)."""
    node = Node()
    for field, value in fields.items():
        if field in _FACET_KINDS:
            facet = _FACET_KINDS[field]()
            facet.__dict__.update(value)
            value = facet
        setattr(node, field, value)
    return node


_FACET_KINDS = {"string": StringRules, "number": NumberRules, "object": ObjectRules, "array": ArrayRules}
FACETS = frozenset(_FACET_KINDS)  # the node's fields that are facets
_FACET_CLASSES = frozenset(_FACET_KINDS.values())


def subnodes(node: Node) -> list[Node]:
    """Every subschema ``node`` holds, in place or in a value below (a ``$ref``'s target too)."""
    out = [*node.all_of, *(node.any_of or ()), *(node.one_of or ())]
    out += [n for n in (node.not_, node.if_, node.then, node.else_, node.ref, node.unevaluated_properties,
                        node.unevaluated_items) if n is not None]
    obj, arr = node.object, node.array
    if obj is not None:
        out += [*obj.properties.values(), *(n for _, n in obj.pattern_properties), *(n for _, n in obj.additional_unless)]
        out += [n for n in (obj.additional, obj.property_names) if n is not None]
        out += [need for _, need in obj.dependent if isinstance(need, Node)]
        for kind, what, value in obj.some_member:
            out += [what, value] if kind == "names" else [value]
    if arr is not None:
        out += [*arr.prefix, *(n for n in (arr.rest, arr.contains) if n is not None), *arr.contains_also]
    return out


def literal_values(node: Node) -> list | None:
    """The values ``enum`` and ``const`` allow together (None: neither is there)."""
    if node.enum is None and node.const is ABSENT:
        return None
    if node.enum is None:
        return [node.const]
    return list(node.enum) if node.const is ABSENT else [v for v in node.enum if json_equal(v, node.const)]


def same(x: Node, y: Node) -> bool:
    """Whether nodes ``x`` and ``y`` say the same: two read from schema objects equal as JSON, else
    field by field (a node made by the meet or the complement)."""
    if x is y:
        return True
    if x.source is not None and y.source is not None:
        return json_equal(x.source, y.source)
    return _same(said(x), said(y))


def _same(a, b) -> bool:
    if isinstance(a, Node) and isinstance(b, Node):
        return same(a, b)
    if type(a) in _FACET_CLASSES and type(a) is type(b):
        return _same(said(a), said(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return not isinstance(a, Node) and not isinstance(b, Node) and json_equal(a, b)


def lone_ref(node: Node) -> bool:
    """Whether ``node`` is a ``$ref`` and nothing else: the lowering calls its target in its place."""
    return node.ref is not None and says_only(node, _REF_TEXT)


def says_only(part, fields: frozenset) -> bool:
    """Whether a node or a facet says nothing but in ``fields`` (``said``, without building it)."""
    kind = type(part)
    return all(field in fields or not says(kind, field, value) for field, value in vars(part).items())


def said(part) -> dict:
    """The fields of a node or a facet that say something: set, and not to their class default
    (a ``const`` of ``false`` or ``null`` says something: ``ABSENT`` is the default there)."""
    kind = type(part)
    return {field: value for field, value in vars(part).items() if says(kind, field, value)}


def says(kind: type, field: str, value) -> bool:
    """Whether ``value`` in ``field`` of a ``kind`` (a node or facet class) says something (``said``)."""
    if field in _WHERE:
        return False
    default = getattr(kind, field)
    return value is not default and (type(value) is not type(default) or value != default)
