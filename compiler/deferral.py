"""Which subschemas may wait to be lowered until a generation first reaches them.

A large document (a Kubernetes resource, a linter's configuration) is lowered whole at compile,
though a generation visits a small part of it. A fragment may wait when lowering it later can
change nothing that compiling says or decides:

- it is *quiet*: every keyword in it and below it is one whose lowering raises nothing and warns of
  nothing (``QUIET``, with the conditions ``_quiet_node`` checks), so a schema is still refused or
  accepted whole at compile;
- nothing below it lies on a ``$ref`` cycle: it never costs a recursive frame, and whether it can
  finish does not depend on the depth left;
- it is *inhabited*: some value satisfies it, so its start is live before it is lowered.

The answer is conservative (a fragment it does not vouch for is lowered at compile, as before) and
memoised per node.
"""

from __future__ import annotations

import json

from .ir import ABSENT, ANY, NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules, literal_values, lone_ref, says_only
from .values import has_type, is_number, json_type
from .any_order import GRID_MAX
from .containers import MAX_CONTAINS, item_cases
from .counting import counted_group
from .errors import SchemaError
from .formats import CHECKED_BUT_OPEN, KNOWN_FORMATS
from .merge import trivial
from .values import json_in
from .refs import SchemaDocument
from .regex import pattern_dfa, pattern_outline

COUNT_MAX = 100_000  # ``context.count_of`` refuses counts above it
# what a node may say where its lowering cannot fail (with the conditions ``_quiet_node`` checks), by
# node and facet (``ir.says_only``); identifiers only matter in a document where one sits below the
# root, which never defers
QUIET = {
    Node: frozenset({"types", "formats", "enum", "const", "ref_text", "any_of", "string", "number", "object", "array"}),
    StringRules: frozenset({"min_length", "max_length", "patterns"}),
    NumberRules: frozenset({"minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "not_integer"}),
    ObjectRules: frozenset({"required", "properties", "additional", "pattern_properties"}),
    ArrayRules: frozenset({"min_items", "max_items", "rest", "contains", "contains_also"}),
}
LITERAL_QUIET = frozenset({"enum", "const", "types", "not_values"})  # an enum's values filtered by these
_ANY_OF = frozenset({"any_of"})
PRODUCT_MAX = 100_000  # ``chardfa.with_length`` and ``intersect`` refuse an automaton past it
_BUSY = object()


class Deferral:
    """``verdict(schema)``: whether ``schema``'s fragment may be lowered when first reached."""

    def __init__(self, document: SchemaDocument, any_order: bool, regex_dialect: str, met, shape, past_deadline):
        self.doc = document
        self.past_deadline = past_deadline  # whether the compile ran past its time: judge no more
        self.met = met  # a schema's node with its allOf met as the lowering meets it (``Lowering.met``)
        self.shape = shape  # a number per schema content (``Shapes.of``)
        self.any_order = any_order
        self.regex_dialect = regex_dialect
        self._too_deep = False
        self._quiet: dict[object, object] = {}  # ``_key`` -> _BUSY, False, or the subtree's weight
        self._inhabited_memo: dict[tuple[int, int], bool] = {}
        self._keep: list = []  # schemas judged by id, kept alive so their ids stay theirs
        self._counted: set[str] = set()  # the shared scalar automata weighed already (``_own_weight``)
        self._called: set = set()  # the shapes of the called fragments weighed already (``_first_call``)
        self._contained: dict[int, list] = {}  # id of an array schema with contains -> ``_matches``

    def verdict(self, schema) -> tuple[bool, int] | None:
        """None: lower it now; else whether it can finish with no recursive frame to spare
        (``Program.defer``'s ``shallow``) and a bound on the states lowering it writes."""
        if not _judged(schema) or self.doc.has_ids:
            return None
        weight = self.weight(schema)
        if weight is None or self._too_deep:
            return None
        try:
            if not self._inhabited(schema, 1):
                return None
            return self._inhabited(schema, 0), weight
        except RecursionError:  # required properties nested thousands deep: all lowered now
            self._too_deep = True
            return None

    def _node(self, schema: dict):
        """``schema`` as the lowering reads it, read: its ``$ref`` alone in drafts 3 to 7, its ``allOf``
        met, its ``anyOf`` beside other keywords or its ``not`` made branches (``Lowering.met``; left whole,
        and so not quiet, where that fails); False where nothing meets (quiet, no value), None where
        an object is decided member by member (``alive.py``: not quiet)."""
        met = self.met(schema)
        return False if met is NEVER else met if isinstance(met, Node) else None

    def weight(self, schema) -> int | None:
        """None unless ``schema`` is quiet here and below and on no ``$ref`` cycle; then a bound
        on the states its lowering writes, a subschema lowered in place counted at each use, a
        called one once per content (iterative: deep schemas stay off the stack). Judged once per
        content, as the lowering shares fragments: a product of branches met again and again
        stays as small as what it writes."""
        memo = self._quiet
        if not _judged(schema):
            return 0
        work: list[list] = [[schema, None, 0, 0, 0, self._key(schema)]]  # schema, its subschemas, the next
        # one, weight so far, how many of them are called (not in place), the schema's memo key
        steps = 0
        while work:
            item = work[-1]
            s, kids, key = item[0], item[1], item[5]
            if kids is None:  # entering
                if key in memo and memo[key] is not _BUSY:
                    work.pop()
                    continue
                steps += 1
                if steps % 64 == 0 and self.past_deadline():  # the lowering refuses it: stop judging
                    return None
                memo[key] = _BUSY
                node = self._node(s)
                if node is False:  # written as a state with no way out: quiet and light
                    memo[key] = 0
                    work.pop()
                    continue
                if not self._quiet_node(node):
                    memo[key] = False
                    work.pop()
                    continue
                kids = [k for k in self._children(node) if _judged(k)]
                called = item[4] = len(kids) - len(node.any_of or ())  # the kids before are called, not inlined
                kids = item[1] = [(k, self._key(k) if i < called else self._id(k)) for i, k in enumerate(kids)]
                item[3] = self._own_weight(node)
            i, total = item[2], item[3]
            while i < len(kids):
                found = memo.get(kids[i][1])
                if found is None or found is False or found is _BUSY:  # unseen, not quiet, or a cycle
                    break
                if i >= item[4] or self._first_call(kids[i][1]):
                    total += found
                i += 1
            item[2], item[3] = i, total
            if i < len(kids) and memo.get(kids[i][1]) is None:
                work.append([kids[i][0], None, 0, 0, 0, kids[i][1]])
                continue
            memo[key] = total if i == len(kids) else False
            work.pop()
        found = memo[self._key(schema)]
        return None if found is False else found

    def _id(self, schema: dict):
        self._keep.append(schema)  # judged by the object: kept alive, so its id stays its own
        return ("id", id(schema))

    def _key(self, schema: dict):
        """What ``schema`` is judged by: its content (``Shapes.of``), as ``Lowering.schema_key``
        tells fragments apart."""
        return self.shape(schema)

    def _first_call(self, key) -> bool:
        """Whether no schema of the same content (``key``) was called before: a called fragment is
        lowered once per content (``Lowering.schema_key``), so its states are counted once."""
        if key in self._called:
            return False
        self._called.add(key)
        return True

    def _own_weight(self, node: Node) -> int:
        """States the node's own keywords may write, generously (its subschemas' are added)."""
        obj, arr, string, number = node.object, node.array, node.string, node.number
        names = obj.properties if obj is not None else {}
        weight = 64 + sum(len(name) + 24 for name in names)
        for pattern, _ in obj.pattern_properties if obj is not None else ():  # the keys it matches and those it does not, beyond the names
            weight += 64 + 8 * pattern_dfa(pattern, dialect=self.regex_dialect).size * (sum(map(len, names)) + 1)
        if self.any_order and 1 < len(names) <= GRID_MAX:
            weight <<= len(names)  # a grid of which properties were written
        weight += 16 * sum(len(json.dumps(v)) for v in node.enum or ())
        weight += 16 * (len(json.dumps(node.const)) if node.const is not ABSENT else 0)
        if string is not None:
            weight += 32 * (string.max_length or string.min_length or 0)  # counted: a block per count
        if arr is not None:
            columns = 1 << (len(arr.contains_also) + 1) if arr.contains is not None else 1  # counts of matches
            weight += 32 * columns * (arr.max_items or arr.min_items or 1)
        else:
            weight += 32
        if string is not None and string.patterns:  # its automaton, crossed with a count when not counted, and its scalars' fragments
            outline = self._pattern(node)
            weight += 2 * outline.states * (_cap(string, outline) + 1) + 48 * outline.ranges
        bounds = number.bounds if number is not None else ()
        if node.formats or any(b is not None for b in bounds):  # an automaton shared by its keywords
            shared = json.dumps([node.types, node.formats, bounds, string and (string.min_length, string.max_length),
                                 number is not None and number.not_integer, node.not_values], default=str)
            if shared not in self._counted:  # written once however many use it
                self._counted.add(shared)
                weight += 1024
        return weight

    def _children(self, node: Node) -> list:
        """The subschemas lowering ``node`` reaches: the members' and items' values of the types it
        admits, a reference's target, and its ``anyOf`` branches."""
        kinds, obj, arr = node.types, node.object, node.array
        kids = []
        if obj is not None and (kinds is None or "object" in kinds):
            kids += obj.properties.values()
            if obj.additional is not None:
                kids.append(obj.additional)
            kids += [sub for _, sub in obj.pattern_properties]
        if arr is not None and (kinds is None or "array" in kinds):
            if arr.rest is not None:
                kids.append(arr.rest)
            kids += self._matches(node)
        if node.ref is not None:
            kids.append(node.ref)
        return kids + list(node.any_of or ())  # last: lowered in place, the others are called

    def _quiet_node(self, node) -> bool:
        if node is None:  # an object decided member by member (``alive.py``)
            return False
        if node.enum is not None or node.const is not ABSENT:  # values filtered by their type and excluded values only
            return says_only(node, LITERAL_QUIET)
        if not all(says_only(part, QUIET[type(part)]) for part in (node, *_facets(node))):
            return False
        # met with siblings: merged (a reference maybe recursively)
        if node.ref is not None and not lone_ref(node) or node.any_of is not None and not says_only(node, _ANY_OF):
            return False
        if node.formats and (len(node.formats) > 1 or not _plain_format(node.formats[0])):
            return False
        string, obj, arr = node.string, node.object, node.array
        if string is not None and string.patterns:  # one pattern that compiles, alone with lengths its product can hold
            outline = self._pattern(node)
            if node.formats or outline is None or outline.states * (_cap(string, outline) + 1) > PRODUCT_MAX:
                return False
        if arr is not None and len(arr.contains_also) >= MAX_CONTAINS:
            return False
        if obj is not None and obj.pattern_properties and not self._one_key_pattern(obj):
            return False
        counts = [string.min_length, string.max_length] if string is not None else []
        counts += [arr.min_items, arr.max_items] if arr is not None else []
        return all(c is None or c <= COUNT_MAX for c in counts)

    def _one_key_pattern(self, obj: ObjectRules) -> bool:
        """At most one patternProperties pattern, which compiles and matches no named property: no
        key meets two schemas, no name meets its pattern's, no required name two patterns'."""
        if len(obj.pattern_properties) > 1:
            return False
        names = [*obj.properties, *obj.required]
        for pattern, _ in obj.pattern_properties:
            try:
                dfa = pattern_dfa(pattern, dialect=self.regex_dialect)
            except SchemaError:
                return False
            if any(dfa.matches(name) for name in names):
                return False
            if (dfa.size + 1) * (sum(len(n) for n in names) + 2) > PRODUCT_MAX:
                return False  # the keys it matches beyond the names, past ``chardfa.intersect``'s bound
        return True

    def _pattern(self, node: Node):
        patterns = node.string.patterns
        if len(patterns) != 1:
            return None
        return pattern_outline(patterns[0], self.regex_dialect, counted_group(node, self.regex_dialect) is not None)

    def _inhabited(self, schema: dict, frames: int) -> bool:
        """Some value satisfies ``schema`` (quiet, its subschemas quiet) with at most ``frames`` (0 or
        1) recursive frames: any value (``true``, ``{}``) is the recursive fragment, one frame."""
        key = (self._key(schema), frames)
        found = self._inhabited_memo.get(key)
        if found is None:
            found = self._inhabited_memo[key] = self._inhabited_now(self._node(schema), frames)
        return found

    def _inhabited_now(self, node, frames: int) -> bool:
        if node is False:
            return False
        if node.ref is not None:
            return self._inhabited_sub(node.ref, frames)
        if node.any_of is not None:
            return any(self._inhabited_sub(branch, frames) for branch in node.any_of)
        if node.enum is not None or node.const is not ABSENT:  # (both: the values they allow together)
            values = [v for v in literal_values(node) if not json_in(v, node.not_values)]
            return any(node.types is None or any(has_type(v, k, json_type(v)) for k in node.types) for v in values)
        kinds = ["null"] if node.types is None else node.types
        return any(_TYPE_INHABITED[k](self, node, frames) for k in kinds)

    def _inhabited_sub(self, schema, frames: int) -> bool:
        if trivial(schema):
            return frames > 0  # any value: the recursive fragment
        return _judged(schema) and self._inhabited(schema, frames)

    def _object(self, node: Node, frames: int) -> bool:
        obj = node.object or ObjectRules()
        return all(name in obj.properties and self._inhabited_sub(obj.properties[name], frames) for name in obj.required)

    def _array(self, node: Node, frames: int) -> bool:
        arr = node.array or ArrayRules()
        lo, hi = arr.min_items or 0, arr.max_items
        if hi is not None and lo > hi:
            return False
        items = arr.rest if arr.rest is not None else ANY
        matches = self._matches(node)  # each contains met by an item of its own, the rest any items
        if matches:
            return (hi is None or hi >= len(matches)) and all(self._inhabited_sub(m, frames) for m in matches) and (
                lo <= len(matches) or self._inhabited_sub(items, frames))
        return lo == 0 or self._inhabited_sub(items, frames)

    def _matches(self, node: Node) -> list:
        """The item schemas ``lower_array`` calls beside ``items`` for the array's ``contains``
        (met in from one ``allOf`` branch or more): the items met with each set of them."""
        arr = node.array
        if arr is None or arr.contains is None:
            return []
        found = self._contained.get(id(node))
        if found is None:
            also = [arr.contains, *arr.contains_also]
            found = self._contained[id(node)] = item_cases(arr.rest if arr.rest is not None else ANY, also)[1:]
            self._keep.append(node)
        return found


def _judged(schema) -> bool:
    """Whether ``schema`` (a node) is judged: ``true`` and ``false`` weigh nothing."""
    return isinstance(schema, Node) and schema is not ANY and schema is not NEVER


def _plain_format(name) -> bool:
    return isinstance(name, str) and name in KNOWN_FORMATS and name not in CHECKED_BUT_OPEN


def _facets(node: Node) -> list:
    return [f for f in (node.string, node.number, node.object, node.array) if f is not None]


def _cap(string: StringRules, outline) -> int:
    """The count ``chardfa.with_length`` would cross a pattern's automaton with."""
    lo, hi = _pattern_lengths(string, outline)
    return lo if hi is None else hi


def _pattern_lengths(string: StringRules, outline) -> tuple[int, int | None]:
    lo, hi = max(string.min_length or 0, outline.least), string.max_length
    return lo, outline.most if hi is None else hi if outline.most is None else min(hi, outline.most)


def _string(self, node: Node, frames: int) -> bool:
    string = node.string or StringRules()
    lo, hi = string.min_length or 0, string.max_length
    if string.patterns:  # a match of a length within the bounds (quiet: no format beside it)
        outline = self._pattern(node)
        lo, hi = _pattern_lengths(string, outline)
        shortest = outline.shortest
        if shortest is None or (hi is not None and max(lo, shortest) > hi):
            return False
        return outline.every_length or shortest >= lo
    if node.formats:
        return string.min_length is None and hi is None  # a format's own lengths, untested against bounds
    return hi is None or lo <= hi


def _number(integer: bool):
    def inhabited(_, node: Node, frames: int) -> bool:
        number = node.number or NumberRules()
        lo, hi, xlo, xhi = number.bounds
        low = max((v for v in (lo, xlo) if is_number(v)), default=None)
        high = min((v for v in (hi, xhi) if is_number(v)), default=None)
        if number.not_integer:  # a fraction: none among integers, some between any two numbers
            return not integer and (low is None or high is None or high > low)
        if low is None or high is None:
            return True
        return high - low >= 2 if integer or xlo is not None or xhi is not None else high >= low
    return inhabited


_TYPE_INHABITED = {
    "null": lambda *_: True, "boolean": lambda *_: True, "string": _string,
    "number": _number(False), "integer": _number(True), "object": Deferral._object, "array": Deferral._array,
}
