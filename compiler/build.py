"""A loaded document read into `ir.Node`s: each keyword's value checked and worded once.

``compile`` and ``validate`` both start here. Every subschema reachable from the root is read
(through ``$ref`` too), whether or not the lowering would read the keyword there, so a schema
``validate`` refuses is one ``compile`` refuses, with the same words and pointer. The walk is an
explicit stack, and pointers are spelled out only to word an error: a schema nested 10,000 deep
must cost neither the recursion limit nor the square of its depth.
"""

from __future__ import annotations

from .errors import InvalidSchema, SchemaTooComplex, UnsupportedKeyword
from .ir import ANY, NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules
from .keywords import ONE_SCHEMA_ORDER, SCHEMA_HOLDERS, TYPES, UNSUPPORTED
from .refs import SchemaDocument, child, pointer_of
from .values import finite_number, json_problems, non_negative_int

COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
          "maxContains")
BOUNDS = ("minimum", "maximum", "multipleOf")
NUMERIC = frozenset(COUNTS + BOUNDS + ("exclusiveMinimum", "exclusiveMaximum"))
SINGLE = tuple(key for key in ONE_SCHEMA_ORDER if key not in ("contentSchema", "items"))  # (items: one or a list)
LISTS = ("allOf", "anyOf", "oneOf")
DEPENDENT = ("dependentRequired", "dependentSchemas", "dependencies")
SUBSCHEMA_KEYS = SCHEMA_HOLDERS - {"$defs", "definitions", "contentSchema"} | {"dependentRequired"}  # what ``_subschemas`` reads
STRING_WORDS = frozenset(("minLength", "maxLength", "pattern"))
NUMBER_WORDS = frozenset(BOUNDS + ("exclusiveMinimum", "exclusiveMaximum"))
OBJECT_WORDS = frozenset(("required", "minProperties", "maxProperties", "propertyNames", "properties",
                          "patternProperties", "additionalProperties") + DEPENDENT)
ARRAY_WORDS = frozenset(("minItems", "maxItems", "items", "prefixItems", "contains", "uniqueItems"))
IN_PLACE_WORDS = frozenset(LISTS + ("$ref", "not", "if", "unevaluatedProperties", "unevaluatedItems"))


def number_rules(rules: dict) -> NumberRules | None:
    """What ``rules`` say of numbers alone (None: nothing): draft 4's boolean flags moved onto
    their bound (``{"minimum": 5, "exclusiveMinimum": true}`` is an exclusive minimum of 5)."""
    if NUMBER_WORDS.isdisjoint(rules):
        return None
    number = NumberRules()
    lo, hi = rules.get("minimum"), rules.get("maximum")
    xlo, xhi = rules.get("exclusiveMinimum"), rules.get("exclusiveMaximum")
    if isinstance(xlo, bool):
        xlo, lo = (lo, None) if xlo else (None, lo)
    if isinstance(xhi, bool):
        xhi, hi = (hi, None) if xhi else (None, hi)
    number.minimum, number.maximum, number.exclusive_minimum, number.exclusive_maximum = lo, hi, xlo, xhi
    if "multipleOf" in rules:
        number.multiples = (rules["multipleOf"],)
    return number


def string_rules(rules: dict) -> StringRules | None:
    """What ``rules`` say of strings alone (None: nothing)."""
    if STRING_WORDS.isdisjoint(rules):
        return None
    string = StringRules()
    string.min_length, string.max_length = rules.get("minLength"), rules.get("maxLength")
    if "pattern" in rules:
        string.patterns = (rules["pattern"],)
    return string


def build(doc: SchemaDocument, root=None) -> Node:
    """The node of ``root`` (the document's own by default), every node reachable from it read."""
    reader = Reader(doc)
    node = reader.node(doc.root if root is None else root, None, ())
    reader.run()
    return node


class Reader:
    """Reads schema objects into nodes: ``node`` for each root, then ``run`` (and again, for
    more roots of the same document: ``of``)."""

    def __init__(self, doc: SchemaDocument):
        self.doc = doc
        self.nodes: list[Node] = []          # every node read, in the order read
        self._by_id: dict[int, Node] = {}    # id of a schema object -> its node
        self._pending: list[Node] = []
        self._targets: list[Node] = []       # ``$ref`` targets the loop check has yet to start from
        # ``$ref`` -> (pointer, target) where a reference means the same everywhere (no ``$id`` below the root)
        self._resolved: dict[str, tuple] | None = None if doc.has_ids else {}

    def node(self, value, path, via: tuple) -> Node:
        """The node of ``value`` (a schema object or boolean), read when ``run`` next runs."""
        if value is True:
            return ANY
        if value is False:
            return NEVER
        found = self._by_id.get(id(value))
        if found is None:
            found = self._by_id[id(value)] = Node()
            found.source, found.path, found.via = value, path, via
            self._pending.append(found)
        return found

    def of(self, value) -> Node:
        """The node of ``value``, a schema object of the document: as read already, else read now
        (several schemas of one document read as one graph, as the ``oneOf`` proofs' tests do)."""
        found = self.node(value, None, ())
        if self._pending:
            self.run()
        return found

    def run(self) -> None:
        """Read every pending node (and what it reaches), then refuse a ``$ref`` loop."""
        pending = self._pending
        while pending:
            node = pending.pop()
            self.nodes.append(node)
            fresh = len(pending)
            self._read(node)
            pending[fresh:] = reversed(pending[fresh:])  # depth first, in document order
        self._check_loops()

    def _read(self, node: Node) -> None:
        """Check ``node``'s keywords and set its fields (``check`` words the errors)."""
        holder = node.source
        if not isinstance(holder, dict):
            return
        doc = self.doc
        rules = holder
        pointer = None

        def where() -> str:
            nonlocal pointer
            if pointer is None:
                pointer = pointer_of(node.path)
            return pointer

        via = node.via

        def invalid(key, reason):
            return InvalidSchema(child(where(), key), reason, via)

        if not UNSUPPORTED.isdisjoint(rules):
            for key in rules:
                if key in UNSUPPORTED:
                    raise UnsupportedKeyword(child(where(), key), key, via=via)
        kinds = rules.get("type")
        if kinds is not None:
            listed = kinds if isinstance(kinds, list) else [kinds]
            if not listed or any(not isinstance(k, str) or k not in TYPES for k in listed):
                raise invalid("type", f"unknown type {kinds!r}")
            node.types = tuple(listed)
        if "enum" in rules:
            if not isinstance(rules["enum"], list):
                raise invalid("enum", "enum must be an array")
            for i, value in enumerate(rules["enum"]):
                if type(value) not in _PLAIN:
                    _check_json(value, child(where(), "enum", i), via)
            node.enum = rules["enum"]
        if "const" in rules:
            if type(rules["const"]) not in _PLAIN:
                _check_json(rules["const"], child(where(), "const"), via)
            node.const = rules["const"]
        required = rules.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise invalid("required", "required must be an array of strings")
        if not NUMERIC.isdisjoint(rules):  # (most schemas have none: one set operation instead of the loops)
            for key in COUNTS:
                if key in rules and not non_negative_int(rules[key]):
                    raise invalid(key, f"{key} must be a non-negative integer")
            for key in BOUNDS:
                if key in rules and not finite_number(rules[key]):
                    raise invalid(key, f"{key} must be a finite number")
            if "multipleOf" in rules and rules["multipleOf"] <= 0:
                raise invalid("multipleOf", "multipleOf must be greater than 0")
            for key in ("exclusiveMinimum", "exclusiveMaximum"):
                if key in rules and not (finite_number(rules[key]) or isinstance(rules[key], bool)):
                    raise invalid(key, f"{key} must be a finite number")
        for key in ("pattern", "format", "$ref"):
            if key in rules and not isinstance(rules[key], str):
                raise invalid(key, f"{key} must be a string")
        if "format" in rules:
            node.formats = (rules["format"],)
        number, string = number_rules(rules), string_rules(rules)
        if number is not None:  # (a field left unset says what its default says, and costs nothing to read)
            node.number = number
        if string is not None:
            node.string = string
        if not OBJECT_WORDS.isdisjoint(rules):
            node.object = ObjectRules()
            node.object.required = required
            node.object.min_properties, node.object.max_properties = rules.get("minProperties"), rules.get("maxProperties")
        if not ARRAY_WORDS.isdisjoint(rules):
            node.array = ArrayRules()
            node.array.min_items, node.array.max_items = rules.get("minItems"), rules.get("maxItems")
            if "uniqueItems" in rules:
                if not isinstance(rules["uniqueItems"], bool):
                    raise invalid("uniqueItems", "uniqueItems must be a boolean")
                node.array.unique = rules["uniqueItems"]
        if not SUBSCHEMA_KEYS.isdisjoint(rules):
            self._subschemas(node, rules, where, invalid)
        if "$ref" in rules:
            ref = rules["$ref"]
            resolved = self._resolved.get(ref) if self._resolved is not None else None
            if resolved is None:
                resolved = doc.resolve(ref, where(), via)
                if self._resolved is not None:
                    self._resolved[ref] = resolved
            target_pointer, target = resolved
            node.ref_text, node.ref_pointer = ref, target_pointer
            node.ref = self.node(target, (None, target_pointer) if target_pointer else None, via + (ref,))
            self._targets.append(node.ref)

    def _subschemas(self, node: Node, rules: dict, where, invalid) -> None:
        """Read the keywords that hold subschemas, each subschema's shape checked as it is met."""
        via = node.via
        path = node.path

        def sub(segments: tuple, value) -> Node:
            if not isinstance(value, (dict, bool)):
                raise InvalidSchema(child(where(), *segments), "a schema must be an object or a boolean", via)
            return self.node(value, (path, segments), via)

        def mapping(key) -> dict:
            if not isinstance(rules[key], dict):
                raise invalid(key, f"{key} must be an object")
            return rules[key]

        obj, arr = node.object, node.array
        if "properties" in rules:
            obj.properties = {name: sub(("properties", name), value) for name, value in mapping("properties").items()}
        if "patternProperties" in rules:
            obj.pattern_properties = [(pattern, sub(("patternProperties", pattern), value))
                                      for pattern, value in mapping("patternProperties").items()]
        single = {key: sub((key,), rules[key]) for key in SINGLE if key in rules}
        if "additionalProperties" in single:
            obj.additional = single["additionalProperties"]
        if "propertyNames" in single:
            obj.property_names = single["propertyNames"]
        node.not_ = single.get("not")
        if "if" in single:
            node.if_, node.then, node.else_ = single["if"], single.get("then"), single.get("else")
        if "contains" in single:
            arr.contains = single["contains"]
            arr.min_contains, arr.max_contains = rules.get("minContains", 1), rules.get("maxContains")
        unevaluated = [key for key in ("unevaluatedProperties", "unevaluatedItems") if key in single]
        node.unevaluated = bool(unevaluated)
        if "unevaluatedProperties" in unevaluated:
            node.unevaluated_properties = single["unevaluatedProperties"]
        if "unevaluatedItems" in unevaluated:
            node.unevaluated_items = single["unevaluatedItems"]
        for key in DEPENDENT:
            if key in rules:
                for name, need in mapping(key).items():
                    if isinstance(need, list) and key != "dependentSchemas":
                        if not all(isinstance(r, str) for r in need):
                            raise invalid(key, f"{key} lists must hold property names")
                    elif key != "dependentRequired":
                        need = sub((key, name), need)
                    else:
                        raise invalid(key, "dependentRequired values must be arrays of names")
                    obj.dependent = obj.dependent + [(name, need)]
                    if key == "dependentSchemas":
                        obj.dependent_schemas = {**obj.dependent_schemas, name: need}
        items = rules.get("items")
        if isinstance(items, list):  # draft 4-2019 tuple form: additionalItems is the rest
            arr.prefix = [sub(("items", i), value) for i, value in enumerate(items)]
            arr.rest, arr.listed = single.get("additionalItems"), True
        elif "items" in rules:
            arr.rest = sub(("items",), items)
        for key in ("prefixItems", *LISTS):
            if key in rules:
                if not isinstance(rules[key], list) or (key != "prefixItems" and not rules[key]):
                    raise invalid(key, f"{key} must be a non-empty array")
                branches = [sub((key, i), value) for i, value in enumerate(rules[key])]
                if key == "prefixItems":
                    if not isinstance(items, list):
                        arr.prefix = branches
                elif key == "allOf":
                    node.all_of = branches
                elif key == "anyOf":
                    node.any_of = branches
                else:
                    node.one_of = branches
                    node.one_of_first = "properties" in rules and list(rules).index("properties") > list(rules).index("oneOf")

    def _check_loops(self) -> None:
        """A ``$ref`` loop that never descends into the instance (``{"$ref": "#"}``) can be neither
        lowered nor validated: refused, naming a ``$ref`` on it. Every such loop passes through a
        ``$ref`` target (in-place keywords alone only go down the document), so the depth-first
        search starts from those alone."""
        state: dict[int, int] = {}  # id of a node -> 1: on the depth-first stack, 2: finished
        for start in self._targets:
            if id(start) in state:
                continue
            state[id(start)] = 1
            stack = [(start, iter(_in_place(start)))]
            while stack:
                node, pending = stack[-1]
                following = next(pending, None)
                if following is None:
                    state[id(node)] = 2
                    stack.pop()
                elif state.get(id(following)) == 1:
                    loop = [n for n, _ in stack[[id(n) for n, _ in stack].index(id(following)):]]
                    holder = next(n for n in loop if n.ref is not None)
                    raise InvalidSchema(pointer_of(holder.path), f"$ref {holder.ref_text!r} loops back without "
                                                                 "descending into the instance", holder.via)
                elif id(following) not in state:
                    state[id(following)] = 1
                    stack.append((following, iter(_in_place(following))))
        self._targets.clear()


_PLAIN = frozenset({str, int, bool, type(None)})  # values JSON always holds (most enums hold nothing else)


def _check_json(value, pointer: str, via: tuple) -> None:
    """An ``enum`` or ``const`` value JSON can hold and a validator can walk (a schema handed over
    as a Python object may hold NaN, a set or a value nested past `MAX_DEPTH`)."""
    for path, what, too_deep in json_problems(value):
        if too_deep:
            raise SchemaTooComplex(pointer, f"a value {what}", via)
        raise InvalidSchema(pointer + pointer_of(path), what, via)


def _in_place(node: Node) -> list[Node]:
    """The subschemas applied to the same instance as ``node``."""
    out = [*node.all_of, *(node.any_of or ()), *(node.one_of or ())]
    out += [n for n in (node.not_, node.if_, node.then, node.else_, node.ref) if n is not None]
    if node.object is not None:
        out += [need for _, need in node.object.dependent if isinstance(need, Node)]
    return [n for n in out if n is not ANY and n is not NEVER]
