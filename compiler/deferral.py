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
memoised per schema object.
"""

from __future__ import annotations

import json

from .build import number_rules
from .ir import NumberRules
from .values import has_type, is_number, json_type
from .any_order import GRID_MAX
from .containers import MAX_CONTAINS, item_cases
from .counting import counted_group
from .errors import SchemaError
from .formats import CHECKED_BUT_OPEN, KNOWN_FORMATS
from .merge import constraints, is_trivial, json_in, may_meet
from .refs import SchemaDocument
from .regex import pattern_dfa, pattern_outline

COUNT_MAX = 100_000  # ``context.count_of`` refuses counts above it
# keywords whose lowering cannot fail (with the conditions ``_quiet_node`` checks), among those it
# reads (``merge.constraints``: annotations, identifiers and words outside the vocabularies are not;
# identifiers only matter in a document where one sits below the root, which never defers)
QUIET = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format",
    "enum", "const", "$ref", "anyOf", "pattern", "contains", "_contains_also", "_not_integer", "patternProperties",
})
LITERAL_QUIET = frozenset({"enum", "const", "type", "_not_values"})  # an enum's values filtered by these
# what a format's or a bounded number's automaton is shared by (``ScalarLowering``'s keys, coarser)
SHARED_BY = ("type", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
             "_not_integer", "_not_values")
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength")
PRODUCT_MAX = 100_000  # ``chardfa.with_length`` and ``intersect`` refuse an automaton past it
_BUSY = object()


class Deferral:
    """``verdict(schema)``: whether ``schema``'s fragment may be lowered when first reached."""

    def __init__(self, document: SchemaDocument, any_order: bool, regex_dialect: str, met, shape, past_deadline):
        self.doc = document
        self.past_deadline = past_deadline  # whether the compile ran past its time: judge no more
        self.met = met  # a schema with its allOf met as the lowering meets it (``Lowering.met``)
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
        if not isinstance(schema, dict) or self.doc.has_ids:
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

    def _node(self, schema: dict) -> dict:
        """``schema`` as the lowering reads it: its ``$ref`` alone in drafts 3 to 7, its ``allOf``
        met, its ``anyOf`` beside other keywords or its ``not`` made branches (``Lowering.met``; left whole,
        and so not quiet, where that fails)."""
        if not may_meet(schema):
            return schema
        return self.met(schema)  # False: nothing meets (quiet, no value)

    def _target(self, node: dict):
        return self.doc.resolve(node["$ref"], "")[1]

    def weight(self, schema) -> int | None:
        """None unless ``schema`` is quiet here and below and on no ``$ref`` cycle; then a bound
        on the states its lowering writes, a subschema lowered in place counted at each use, a
        called one once per content (iterative: deep schemas stay off the stack). Judged once per
        content, as the lowering shares fragments: a product of branches met again and again
        stays as small as what it writes."""
        memo = self._quiet
        if not isinstance(schema, dict):
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
                kids = [k for k in self._children(node) if isinstance(k, dict)]
                called = item[4] = len(kids) - len(node.get("anyOf", ()))  # the kids before are called, not inlined
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
        """What ``schema`` is judged by: its content (``Shapes.of``) as ``Lowering.schema_key``
        tells fragments apart, else the object (kept alive)."""
        shape = self.shape(schema)
        if shape is None:
            return self._id(schema)
        return shape

    def _first_call(self, key) -> bool:
        """Whether no schema of the same content (``key``) was called before: a called fragment is
        lowered once per content (``Lowering.schema_key``), so its states are counted once."""
        if key in self._called:
            return False
        self._called.add(key)
        return True

    def _own_weight(self, node: dict) -> int:
        """States the node's own keywords may write, generously (its subschemas' are added)."""
        names = node.get("properties", {})
        weight = 64 + sum(len(name) + 24 for name in names)
        for pattern in node.get("patternProperties", ()):  # the keys it matches and those it does not, beyond the names
            weight += 64 + 8 * pattern_dfa(pattern, dialect=self.regex_dialect).size * (sum(map(len, names)) + 1)
        if self.any_order and 1 < len(names) <= GRID_MAX:
            weight <<= len(names)  # a grid of which properties were written
        if "enum" in node or "const" in node:
            weight += 16 * sum(len(json.dumps(v)) for v in node.get("enum", ()))
            weight += 16 * (len(json.dumps(node["const"])) if "const" in node else 0)
        weight += 32 * (node.get("maxLength") or node.get("minLength") or 0)  # counted: a block per count
        columns = 1 << (len(node.get("_contains_also", ())) + 1) if "contains" in node else 1  # counts of matches
        weight += 32 * columns * (node.get("maxItems") or node.get("minItems") or 1)
        if "pattern" in node:  # its automaton, crossed with a count when not counted, and its scalars' fragments
            outline = self._pattern(node)
            weight += 2 * outline.states * (_cap(node, outline) + 1) + 48 * outline.ranges
        if "format" in node or "minimum" in node or "maximum" in node:  # an automaton shared by its keywords
            shared = json.dumps([node.get(k) for k in SHARED_BY], sort_keys=True, default=str)
            if shared not in self._counted:  # written once however many use it
                self._counted.add(shared)
                weight += 1024
        return weight

    def _children(self, node: dict) -> list:
        """The subschemas lowering ``node`` reaches: the members' and items' values of the types it
        admits, a reference's target, and its ``anyOf`` branches."""
        kinds = node.get("type")
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        kids = []
        if kinds is None or "object" in kinds:
            kids += node.get("properties", {}).values()
            if "additionalProperties" in node:
                kids.append(node["additionalProperties"])
            kids += node.get("patternProperties", {}).values()
        if kinds is None or "array" in kinds:
            if "items" in node:
                kids.append(node["items"])
            kids += self._matches(node)
        if "$ref" in node:
            kids.append(self._target(node))
        return kids + list(node.get("anyOf", ()))  # last: lowered in place, the others are called

    def _quiet_node(self, node) -> bool:
        if not isinstance(node, dict):  # an object decided member by member (``alive.py``)
            return False
        keys = constraints(node).keys()
        if "enum" in keys or "const" in keys:  # values filtered by their type and excluded values only
            return keys <= LITERAL_QUIET
        if not keys <= QUIET:
            return False
        for alone in ("$ref", "anyOf"):  # met with siblings: merged (a reference maybe recursively)
            if alone in keys and keys != {alone}:
                return False
        if isinstance(node.get("items"), list) or "format" in keys and not _plain_format(node["format"]):
            return False
        if "pattern" in keys:  # one pattern that compiles, alone with lengths its product can hold
            outline = self._pattern(node)
            if "format" in keys or outline is None or outline.states * (_cap(node, outline) + 1) > PRODUCT_MAX:
                return False
        if len(node.get("_contains_also", ())) >= MAX_CONTAINS:
            return False
        if "patternProperties" in keys and not self._one_key_pattern(node):
            return False
        return keys.isdisjoint(_COUNTS) or all(node.get(k, 0) <= COUNT_MAX for k in _COUNTS)

    def _one_key_pattern(self, node: dict) -> bool:
        """At most one patternProperties pattern, which compiles and matches no named property: no
        key meets two schemas, no name meets its pattern's, no required name two patterns'."""
        patterns = node["patternProperties"]
        if not isinstance(patterns, dict) or len(patterns) > 1:
            return False
        names = [*node.get("properties", {}), *node.get("required", ())]
        for pattern in patterns:
            try:
                dfa = pattern_dfa(pattern, dialect=self.regex_dialect)
            except SchemaError:
                return False
            if any(isinstance(name, str) and dfa.matches(name) for name in names):
                return False
            if (dfa.size + 1) * (sum(len(n) for n in names if isinstance(n, str)) + 2) > PRODUCT_MAX:
                return False  # the keys it matches beyond the names, past ``chardfa.intersect``'s bound
        return True

    def _pattern(self, node: dict):
        pattern = node["pattern"]
        if not isinstance(pattern, str):
            return None
        return pattern_outline(pattern, self.regex_dialect, counted_group(node, self.regex_dialect) is not None)

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
        if "$ref" in node:
            return self._inhabited_sub(self._target(node), frames)
        if "anyOf" in node:
            return any(self._inhabited_sub(branch, frames) for branch in node["anyOf"])
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            values = [v for v in values if not json_in(v, node.get("_not_values", ()))]
            kinds = node.get("type")
            kinds = [kinds] if isinstance(kinds, str) else kinds
            return any(kinds is None or any(has_type(v, k, json_type(v)) for k in kinds) for v in values)
        kinds = node.get("type")
        kinds = ["null"] if kinds is None else [kinds] if isinstance(kinds, str) else kinds
        return any(_TYPE_INHABITED[k](self, node, frames) for k in kinds)

    def _inhabited_sub(self, schema, frames: int) -> bool:
        if is_trivial(schema):
            return frames > 0  # any value: the recursive fragment
        return isinstance(schema, dict) and self._inhabited(schema, frames)

    def _object(self, node: dict, frames: int) -> bool:
        props = node.get("properties", {})
        return all(name in props and self._inhabited_sub(props[name], frames) for name in node.get("required", ()))

    def _array(self, node: dict, frames: int) -> bool:
        lo, hi = node.get("minItems", 0), node.get("maxItems")
        if hi is not None and lo > hi:
            return False
        matches = self._matches(node)  # each contains met by an item of its own, the rest any items
        if matches:
            return (hi is None or hi >= len(matches)) and all(self._inhabited_sub(m, frames) for m in matches) and (
                lo <= len(matches) or self._inhabited_sub(node.get("items", True), frames))
        return lo == 0 or self._inhabited_sub(node.get("items", True), frames)

    def _matches(self, node: dict) -> list:
        """The item schemas ``lower_array`` calls beside ``items`` for the array's ``contains``
        (met in from one ``allOf`` branch or more): the items met with each set of them."""
        if "contains" not in node:
            return []
        found = self._contained.get(id(node))
        if found is None:
            also = [node["contains"], *node.get("_contains_also", ())]
            found = self._contained[id(node)] = item_cases(node.get("items", True), also)[1:]
            self._keep.append(node)
        return found


def _plain_format(name) -> bool:
    return isinstance(name, str) and name in KNOWN_FORMATS and name not in CHECKED_BUT_OPEN


def _cap(node: dict, outline) -> int:
    """The count ``chardfa.with_length`` would cross a pattern's automaton with."""
    lo, hi = _pattern_lengths(node, outline)
    return lo if hi is None else hi


def _pattern_lengths(node: dict, outline) -> tuple[int, int | None]:
    lo, hi = max(node.get("minLength", 0), outline.least), node.get("maxLength")
    return lo, outline.most if hi is None else hi if outline.most is None else min(hi, outline.most)


def _string(self, node: dict, frames: int) -> bool:
    lo, hi = node.get("minLength", 0), node.get("maxLength")
    if "pattern" in node:  # a match of a length within the bounds (quiet: no format beside it)
        outline = self._pattern(node)
        lo, hi = _pattern_lengths(node, outline)
        shortest = outline.shortest
        if shortest is None or (hi is not None and max(lo, shortest) > hi):
            return False
        return outline.every_length or shortest >= lo
    if "format" in node:
        return "minLength" not in node and hi is None  # a format's own lengths, untested against bounds
    return hi is None or lo <= hi


def _number(integer: bool):
    def inhabited(_, node: dict, frames: int) -> bool:
        number = number_rules(node) or NumberRules()
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
