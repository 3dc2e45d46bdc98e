"""Lowering: a JSON Schema document into a ``Program`` (a byte NFA of calling fragments).

Every subschema that fills a slot (a property value, an array item, a ``$ref`` target) becomes a
fragment of its own, lowered once and called from each place that uses it; fragments are lowered
from a work queue, so a schema nested ten thousand levels deep never deepens the Python stack.
Inside a fragment, ``value`` threads the paths of one JSON value between two states.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
import weakref

from automaton.program import Program, ProgramTooLarge

from . import chardfa
from .alive import AliveObjects, ObjectChoice
from .any_order import AnyOrderLowering, Rest
from .containers import ContainerLowering
from .deferral import Deferral
from .context import REGEX_DIALECT, Options, Slot
from .regex import either_dfa, pattern_dfa
from .errors import InvalidSchema, SchemaError, SchemaTooComplex, Unsatisfiable, UnsupportedKeyword
from .keywords import TYPES
from .merge import Meet, branches, copied, exactly_one, implied, is_union, may_meet, trivial
from .boolean import Complement, conditional, expanded
from .build import Reader
from .ir import ABSENT, ANY, FOLLOW_MAX, NEVER, Node, ObjectRules, literal_values, lone_ref, make, said
from . import products
from .one_of import exact_branches, overlaps
from .refs import SchemaDocument, child
from .unevaluated import Evaluation
from .scalars import ScalarLowering
from .prelude import prelude
from .shapes import Shapes
from .strings import LITERAL, raw_only
from .validation import Validator
from .values import is_number

__all__ = ["Lowering", "Options"]
ALL_OF_MAX = 256
ROOT = Slot("")  # where the deferral meets what it judges (no $id below the root: pointers are only words)
MET_ROUNDS = 8  # meetings of one schema taken up again by ``met`` (the rest left to ``value``)


class Lowering(ScalarLowering, ContainerLowering, AnyOrderLowering, AliveObjects):
    def __init__(self, document: SchemaDocument, options: Options, with_prelude: bool = True):
        self.doc = document
        self.options = options
        # the document read into nodes (checked, each keyword once)
        reader = Reader(document)
        self.root = reader.node(document.root, None, ())
        reader.run()
        self.prog = Program(max_states=options.max_states, max_depth=options.max_depth)
        prelude_keys: dict = {}
        self.writes_all = not with_prelude  # lowering the prelude itself: no counted blocks (``Program.settle``)
        if with_prelude:  # the fragments every grammar may call, lowered once per process (``prelude.py``)
            base, prelude_keys = prelude(options.whitespace, options.max_whitespace, options.dialect)
            self.prog.include(base)
        self.warnings: list[str] = []
        self.reasons: list[tuple[Slot, str]] = []  # why parts of the schema can never match
        self._fragments: dict[object, int] = {}
        self._keep: dict[int, object] = {}  # schemas known by id, kept alive so their ids stay unique
        self._members: dict[tuple, int] = {}  # (name, value schema key) -> member fragment
        self._queue: list[tuple[int, object, Slot]] = []
        self._shared: dict[object, int] = dict(prelude_keys)
        self._shapes = Shapes()
        self._contents: dict[int, int] = {}  # id of a schema -> ``content``
        self._regions: dict[object, list] = {}
        self._either_keys: dict[str, object] = {}  # pattern -> the keys some validator matches it on
        self._spaced: set[int] = set()  # places looping on whitespace (``spaced``)
        self._separated: dict[tuple[int, int], int] = {}  # (place, count) -> past its separator
        self._deadline = time.monotonic() + options.max_seconds
        self._timed = True  # compiling: past the deadline, refuse (what waits is lowered untimed)
        self._slot = Slot("")
        self.evaluation = Evaluation(document)
        self._validator: Validator | None = None  # the judge of literals (``judge``)
        products.forget()  # facts of the last compile's schemas, which their owner may have changed since
        # the complement and the deferral reach the lowering through a proxy: the lowering holds
        # them, and a bound method would make a cycle only the collector frees, with every table
        # of the lowering in it (a third of a median compile went to that)
        me = weakref.proxy(self)
        self.complement = Complement(lambda node, slot: me.ref_target(node, slot),
                                     lambda node, pointer: me.expanded_node(node, pointer))
        # fragments lowered when first entered (``deferral.py``): frag -> (schema, slot, weight)
        self.deferral = Deferral(document, options.property_order == "any", REGEX_DIALECT[options.dialect],
                                 lambda node: me.met(node, ROOT, quiet=True),
                                 lambda node: me.content(node), lambda: time.monotonic() > me._deadline) if options.lazy and with_prelude else None
        self._waiting: dict[int, tuple] = {}  # frag -> (schema or ``Rest``, slot, weight)
        self.lazy_order = self.deferral is not None  # large objects in any order: sets written wait
        self._met: dict[int, object] = {}  # id of a schema -> it met (``met``)
        self._one_of_cases: dict[int, str] = {}  # id of a oneOf's branches made an anyOf's -> "oneOf"
        self.not_alive: set = set()  # oneOfs and nots not decided member by member (``alive.py``)
        self.outside_made: dict = {}  # nots decided member by member, by schema key
        self.regions_made: dict = {}  # a member's values split by the schemas that allow them

    # -- driver ---------------------------------------------------------------------------------
    def compile(self) -> Program:
        try:
            root = self.fragment(self.root, Slot(""))
            self._lower_queue(root)
            if self.prog.weight + sum(weight for _, _, weight in self._waiting.values()) > self.options.max_states:
                # what waits may not fit the budget: lowered now, refused now if too large (a set
                # of names written is small and lowered where reached: 2**n of them may wait)
                while schemas := [frag for frag, (schema, _, _) in self._waiting.items() if not isinstance(schema, Rest)]:
                    for frag in schemas:
                        schema, slot, _ = self._waiting.pop(frag)
                        del self.prog.waiting[frag]
                        self._queue.append((frag, schema, slot))
                    self._lower_queue(root, defer=False)
        except ProgramTooLarge as exc:
            raise SchemaTooComplex(self._slot.pointer, str(exc), self._slot.via) from None
        except RecursionError:
            raise SchemaTooComplex(self._slot.pointer, "schema nested too deeply", self._slot.via) from None
        except OverflowError as exc:  # a scalar automaton (complements, products of patterns) past its bound
            raise SchemaTooComplex(self._slot.pointer, f"an automaton with {exc}", self._slot.via) from None
        self._forget_places()
        self._timed = False
        prog = self.prog
        prog.finish(root)
        if not prog.root_is_live():
            slot, why = self.reasons[0] if self.reasons else (Slot(""), "no document can satisfy the schema")
            raise Unsatisfiable(slot.pointer, why, slot.via)
        if self._waiting:
            # the program holds this lowering to lower what waits, and gets it back each time
            # (``expand``): not the other way round, or the two would be a cycle only the
            # collector frees, with every table of the lowering in it
            prog.expander = self.expand
            self.prog = None
        return prog

    def _lower_queue(self, root: int, defer: bool = True) -> None:
        """Lower the queued fragments, leaving to wait those that may (``deferral.py``)."""
        while self._queue:
            self._check_deadline()
            frag, schema, slot = self._queue.pop()
            verdict = None
            if defer and self.deferral is not None and frag != root:
                schema = self.met(schema, slot)
                verdict = None if isinstance(schema, ObjectChoice) else self.deferral.verdict(schema)
            if verdict is not None:
                self._waiting[frag] = (schema, slot, verdict[1])
                self.prog.defer(frag, verdict[0])
                continue
            self._slot = slot
            f = self.prog.fragments[frag]
            self.value(schema, slot, f.start, f.final)

    def _check_deadline(self) -> None:
        if self._timed and time.monotonic() > self._deadline:
            raise SchemaTooComplex(self._slot.pointer, f"compiling took over {self.options.max_seconds} s", self._slot.via)

    def expand(self, prog: Program, frag: int, start: int, final: int) -> None:
        """Lower waiting fragment ``frag`` of ``prog`` between ``start`` and ``final``
        (``Program.enter``), and what it queues (quiet too: nothing here can raise)."""
        schema, slot, _ = self._waiting.pop(frag)
        self.prog, self._slot = prog, slot
        try:
            if isinstance(schema, Rest):
                self.write_rest(schema, start, final)
            else:
                self.value(schema, slot, start, final)
            self._lower_queue(-1)  # untimed: the compile is over
        finally:
            self.prog = None
            self._forget_places()
        if not self._waiting:
            prog.expander = None  # nothing waits: the lowering's tables are freed with it

    def _forget_places(self) -> None:
        """Drop what ``spaced`` and ``separated`` know of the states written: a segment lowered
        later writes from its own states only, and a waiting grammar keeps this lowering."""
        self._spaced.clear()
        self._separated.clear()

    def fragment(self, schema, slot: Slot) -> int:
        """The fragment matching one value of ``schema`` (created once, lowered from the queue)."""
        key = self.schema_key(schema)
        frag = self._fragments.get(key)
        if frag is None:
            frag = self.prog.new_fragment()
            self._fragments[key] = frag
            self._queue.append((frag, schema, slot))
        return frag

    def schema_key(self, node: Node):
        """What identifies ``node`` for sharing: its content (``shapes.py``) when no ``$id`` below
        the root can change what a ``$ref`` in it means, else the node itself (kept alive, so its
        id stays its own)."""
        if self.doc.has_ids:
            self._keep[id(node)] = node
            return id(node)
        return ("shape", self.content(node))

    def content(self, node: Node) -> int:
        """The number of what ``node`` says (``shapes.py``): equal for equal contents."""
        found = self._contents.get(id(node))
        if found is None:
            found = self._contents[id(node)] = self._shapes.of(node)
            self._keep[id(node)] = node  # (a node the lowering made: kept, so its id stays its own)
        return found

    def shared(self, key, build) -> int:
        """A fragment built once per ``key`` by ``build(start, final)`` (free strings, scalars, any)."""
        frag = self._shared.get(key)
        if frag is None:
            frag = self.prog.new_fragment()
            self._shared[key] = frag
            f = self.prog.fragments[frag]
            build(f.start, f.final)
        return frag

    def call(self, schema, slot: Slot, src: int, dst: int) -> None:
        frag, slot = self.callee(schema, slot)
        if frag is None:
            self.never(slot, "'false' schema")
        else:
            self.prog.call(src, frag, dst)

    def callee(self, schema, slot: Slot) -> tuple[int | None, Slot]:
        """The fragment a value of ``schema`` calls (the shared any-value one for a schema that
        allows anything, None for ``false``), and the slot its ``$ref``s lead to."""
        node, slot = self.follow_refs(schema, slot)
        if trivial(node):
            return self.any_fragment(), slot
        return (None if node is NEVER else self.fragment(node, slot)), slot

    def follow_refs(self, node, slot: Slot):
        """A node that is only a ``$ref`` is its target: call the target's fragment directly, so a
        recursion level costs one frame, not two."""
        for _ in range(FOLLOW_MAX):
            if not isinstance(node, Node) or not lone_ref(node):
                return node, slot
            node, slot = self.ref_target(node, slot)
        raise InvalidSchema(slot.pointer, "a $ref cycle that never reaches a schema", slot.via)

    @staticmethod
    def ref_target(node: Node, slot: Slot) -> tuple[Node, Slot]:
        """The target of ``node``'s ``$ref`` (resolved where the schema was read) and its slot."""
        return node.ref, Slot(node.ref_pointer, slot.via + (node.ref_text,))

    def key_pattern(self, pattern: str, slot: Slot, either: bool = False):
        """A patternProperties pattern as a scalar automaton, in the options' regex dialect: the
        keys every validator matches it on, or (``either``) some (the same object where the
        readings agree, as for most patterns)."""
        pointer = child(slot.pointer, "patternProperties", pattern)
        every = pattern_dfa(pattern, pointer, dialect=REGEX_DIALECT[self.options.dialect])
        if not either or self.options.dialect != "portable":
            return every
        some = self._either_keys.get(pattern)
        if some is None:
            some = either_dfa(pattern, pointer)
            some = self._either_keys[pattern] = every if some is every or chardfa.difference(some, every).is_empty else some
        return some

    def additional(self, obj: ObjectRules) -> Node:
        """The schema of additional properties (``strict``: none when the keyword is absent)."""
        return obj.additional if obj.additional is not None else NEVER if self.options.strict else ANY

    def state(self, src: int) -> int:
        return self.prog.new_state(self.prog.owner[src])

    # -- one JSON value -------------------------------------------------------------------------
    def value(self, node, slot: Slot, src: int, dst: int) -> None:
        """One value of ``node`` (or of an object decided member by member) from ``src`` to ``dst``."""
        self._slot = slot
        if isinstance(node, ObjectChoice):  # (met where it was queued)
            return self.lower_choice(node, slot, src, dst)
        if node is ANY:
            return self.any_value(src, dst)
        if node is NEVER:
            return self.never(slot, "'false' schema")
        if may_meet(node):
            node = self.met(node, slot)  # as the deferral judged it, met once
        if isinstance(node, ObjectChoice):
            return self.lower_choice(node, slot, src, dst)
        node = self.expanded_node(node, slot.pointer)
        if node.enum is not None or node.const is not ABSENT:  # each value judged against all the rest (``literals``)
            return self.literals(node, slot, src, dst)
        if node.ref is not None:
            ref = node.ref_text
            target, target_slot = self.ref_target(node, slot)
            if lone_ref(node):
                return self.call(target, target_slot, src, dst)
            rest = copied(node)
            rest.ref = rest.ref_text = None
            merged = self.meet_nodes(rest, target, target_slot)
            if ref in slot.via:
                # met again inside its own target: a fragment keyed by the met schema's content, so
                # the next meeting of the same content calls it (a cycle, bounded like any recursion)
                if self.doc.has_ids or merged is ANY or merged is NEVER:
                    raise UnsupportedKeyword(slot.pointer, "$ref", "a recursive reference beside other keywords", slot.via)
                return self.prog.call(src, self.fragment(merged, target_slot), dst)
            return self.value(merged, target_slot, src, dst)
        if node.all_of:
            merged = self.all_of(node, slot)
            if merged is NEVER:
                return self.never(slot, "allOf branches that cannot meet")
            return self.value(merged, slot, src, dst)
        if node.any_of is not None or node.one_of is not None:
            branched = self.branched(node, slot)
            if isinstance(branched, ObjectChoice):
                return self.lower_choice(branched, slot, src, dst)
            branches = branched.any_of
            word = self._one_of_cases.get(id(branches), "anyOf")  # where the branches were written
            for i, branch in enumerate(branches):
                self.value(branch, slot.at(word, i), src, dst)
            return
        if node.not_ is not None:
            met = self.outside(node, slot)
            if not met:
                return self.never(slot, "'not' of a schema every value satisfies")
            for case in met:
                self.value(case, slot, src, dst)
            return
        self.typed(node, slot, src, dst)

    def met(self, node: Node, slot: Slot, quiet: bool = False):
        """``node`` with a top-level ``allOf`` met into one node, then made the
        ``anyOf`` of what ``value`` lowers in its place (``branched``), again while that changes it
        (a few rounds); any other as it is. Met once per node, for the deferral (which judges
        what will be lowered, ``quiet``: a meeting that raises is left to the lowering, which
        raises it with its place; NEVER where nothing meets) and for the lowering, now or when
        first entered."""
        for _ in range(MET_ROUNDS):  # a meeting may leave a lazy meet or a 'not' to take up again
            found = self._met_once(node, slot, quiet)
            if found is NEVER:  # nothing meets: the deferral hears so, ``value`` says why
                return NEVER if quiet else node
            if found is node:
                break
            node = found
        return node

    def _met_once(self, node, slot: Slot, quiet: bool):
        if not may_meet(node):
            return node
        found = self._met.get(id(node))
        if found is None:
            try:
                rules = self.expanded_node(node, slot.pointer)
                # a reference beside other keywords is met by ``value`` (maybe recursively)
                merged = node if rules.ref is not None else self.all_of(rules, slot) if rules.all_of else rules
                if merged is not NEVER and merged.ref is None and not merged.all_of:
                    merged = self.branched(merged, slot)
            except (SchemaError, RecursionError):
                if not quiet:
                    raise
                return node
            found = self._met[id(node)] = merged
            self._keep[id(node)] = node
        return found

    def branched(self, node: Node, slot: Slot):
        """``node`` as an ``anyOf`` of what ``value`` lowers in its place: its ``anyOf`` branches
        each met with the rest, its ``oneOf`` branches (``one_of``), or the cases of its ``not``
        (NEVER when none can meet; an object decided member by member where they would multiply,
        ``alive.py``); ``node`` itself when none applies, or where literals would
        meet past the bounds (``literals`` judges each value against the rest instead)."""
        try:
            return self._branched(node, slot)
        except (SchemaTooComplex, UnsupportedKeyword):
            if node.enum is not None or node.const is not ABSENT:
                return node
            raise

    def _branched(self, node: Node, slot: Slot):
        if node.any_of is not None and not is_union(node):
            rest = copied(node)
            rest.any_of = None
            return make(any_of=[self.meet_nodes(rest, b, slot.at("anyOf", i)) for i, b in enumerate(node.any_of)])
        if node.one_of is not None and node.any_of is None:
            cases = self.one_of(node, slot)
            if isinstance(cases, ObjectChoice):
                return cases
            self._one_of_cases[id(cases)] = "oneOf"  # (kept alive with its node in ``_met``, or here)
            self._keep[id(cases)] = cases
            return make(any_of=cases)
        if node.not_ is not None and node.any_of is None and node.one_of is None:
            choice = self.objects_outside(node, slot)  # where the complement's cases would multiply
            if choice is not None:
                return choice
            cases = self.outside(node, slot)
            return NEVER if not cases else cases[0] if len(cases) == 1 else make(any_of=cases)
        return node

    def one_of(self, node: Node, slot: Slot) -> list | ObjectChoice:
        """``node``'s ``oneOf`` branches each met with the rest: disjoint by proof (``one_of.py``),
        else objects decided member by member (``alive.py``), else each branch without the others
        it may meet."""
        rest = copied(node)
        rest.one_of, rest.one_of_first = None, False
        met = [self.meet_nodes(rest, b, slot.at("oneOf", i)) for i, b in enumerate(node.one_of)]
        exact = exact_branches(met)
        if exact is not None:
            return exact
        choice = self.objects_alive(node, slot)
        if choice is not None:
            return choice
        alone = exactly_one(node.one_of, overlaps(met))
        return [self.meet_nodes(rest, b, slot.at("oneOf", i)) for i, b in enumerate(alone)]

    def outside(self, node: Node, slot: Slot) -> list:
        """What ``node`` without its ``not`` allows, met with each case of the complement of the
        ``not`` (those that can meet)."""
        rest = copied(node)
        rest.not_ = None
        outside = self.complement(node.not_, slot.at("not"))
        if outside.all_of and said(outside).keys() == {"all_of"}:  # outside each of several: their cases
            met = [rest]  # met one part at a time with what is met so far, the empty ones dropped early
            for part in outside.all_of:  # (a oneOf branch without two others: 289 pairs, 16 left)
                met = [m for case in met for other in branches(part)
                       if (m := self.meet_nodes(case, other, slot)) is not NEVER]
                if len(met) > ALL_OF_MAX:
                    raise SchemaTooComplex(slot.pointer, f"a 'not' of more than {ALL_OF_MAX} cases once met", slot.via)
            return met
        return [m for m in (self.meet_nodes(rest, case, slot) for case in branches(outside)) if m is not NEVER]

    def all_of(self, node: Node, slot: Slot) -> Node:
        """``node`` (holding ``allOf``) met into one node, NEVER when the branches cannot meet."""
        rest = copied(node)
        rest.all_of = []
        parts = node.all_of
        if parts and rest.types == ("object",):  # (implied asks for objects alone first: read only then)
            parts = [p for p in parts if not implied(rest, p)]
        if len(parts) > ALL_OF_MAX:  # an allOf met with itself through a $ref doubles at each level
            raise SchemaTooComplex(slot.pointer, f"an allOf of more than {ALL_OF_MAX} branches once met", slot.via)
        # the branches first where one may bring names of its own (a base schema's properties
        # come before the schema's own), else the schema first: branches that only speak of the
        # names it declares (a conditional's test and consequence, mostly) keep its order. Met
        # with the schema's type from the start, so that anyOf branches of other types drop early.
        # Literals first too: their unions are then judged value by value, never multiplied (``merge``).
        own = rest.object.properties if rest.object is not None else {}
        literal = rest.enum is not None or rest.const is not ABSENT
        first = literal or bool(own) and all(_brings_no_name(part, own) for part in parts)
        merged = make(types=rest.types) if rest.types is not None else ANY
        for i, part in ([(None, rest)] if first else []) + list(enumerate(parts)) + ([] if first else [(None, rest)]):
            merged = self.meet_nodes(merged, part, slot if i is None else slot.at("allOf", i))
            if merged is NEVER:
                return NEVER
        return merged

    def meet_nodes(self, a: Node, b: Node, slot: Slot) -> Node:
        """The node meeting nodes ``a`` and ``b`` (``$ref``s inlined, up to a bound), NEVER where no
        value can meet both."""
        if b is ANY:
            return a
        if b is NEVER:
            return NEVER
        self._check_deadline()  # one fragment's meetings may multiply: the compile's time bounds them too
        b = self.expanded_node(b, slot.pointer)
        if trivial(a):
            return b

        def matches(pattern, name):
            return self.key_pattern(pattern, slot).matches(name)

        def resolve(n: Node) -> Node:  # each side's chain of references on its own (both may name one target)
            seen: list[str] = []
            while n.ref is not None:
                ref = n.ref_text
                if ref in seen or len(seen) > 32:
                    raise UnsupportedKeyword(slot.pointer, "$ref", "a recursive reference merged with other keywords", slot.via)
                seen.append(ref)
                target, target_slot = self.ref_target(n, slot)
                rest = copied(n)
                rest.ref = rest.ref_text = None
                if target is NEVER:
                    return NEVER
                target = self.expanded_node(target, target_slot.pointer)
                n = target if trivial(rest) else rest if target is ANY else Meet(
                    slot.pointer, matches, False)(rest, target)
            return n

        a, b = resolve(a), resolve(b)
        if a is NEVER or b is NEVER:
            return NEVER
        return Meet(slot.pointer, matches, alike=not self.doc.has_ids)(a, b)

    def judge(self, node: Node):
        """Whether a value meets ``node``, judged by the validator (the one judge of literals)."""
        if self._validator is None:
            self._validator = Validator.of_nodes(self.doc, self.options.dialect)
        self._validator.prepare(node)
        return lambda value: self._validator.is_valid(value, node)

    def expanded_node(self, node: Node, pointer: str) -> Node:
        """``node`` as the lowering reads it: its unevaluated keywords rewritten (``unevaluated.py``),
        its conditionals an ``allOf`` of their cases (``boolean.expanded``); itself where it has neither."""
        node = self.evaluation.rewrite(node, pointer)
        return expanded(node) if conditional(node) else node

    # -- literals -------------------------------------------------------------------------------
    def literals(self, node: Node, slot: Slot, src: int, dst: int) -> None:
        """The values ``node``'s ``enum`` and ``const`` allow, each judged against the rest of ``node``."""
        values = literal_values(node)
        rest = copied(node)
        rest.enum, rest.const = None, ABSENT
        judged = not trivial(rest)
        numbers = [text for v in values if is_number(v) for text in _number_texts(v)]
        values = [v for v in values if not is_number(v)]
        if judged:  # the same semantics; a number by each of its spellings (1.0 is no integer to validate)
            check = self.judge(rest)
            values = list({json.dumps(w): w for v in values for w in _spellings(v) if check(w)}.values())
            numbers = [text for text in numbers if check(json.loads(text))]
        if not values and not numbers:
            self.never(slot, "no enum/const value satisfies the schema")
            return
        strings = [v for v in values if isinstance(v, str)]
        if strings:
            self.literal_string(strings, src, dst)
        for text in dict.fromkeys(numbers):
            self.prog.text(src, text.encode(), dst)
        for v in values:
            if not isinstance(v, str):
                self.literal_value(v, src, dst, as_written=judged)

    def literal_string(self, strings, src: int, dst: int) -> None:
        """A quoted string equal to one of ``strings``, scalar by scalar (literal policy)."""
        if len(strings) == 1 and raw_only(strings[0]):  # raw only: one spelling, its bytes
            self.prog.text(src, b'"' + strings[0].encode() + b'"', dst)
            return
        open_, close = self.state(src), self.state(src)
        self.prog.text(src, b'"', open_)
        self.lower_chardfa(chardfa.literal_strings(strings), open_, close, LITERAL)
        self.prog.text(close, b'"', dst)

    def literal_value(self, v, src: int, dst: int, as_written: bool) -> None:
        """``v`` inside an array or object value; a number in it ``as_written``, else both ways
        (nothing but the enum speaks to it, so ``1`` and ``1.0`` are alike everywhere)."""
        if v is None or isinstance(v, bool):
            self.prog.text(src, json.dumps(v).encode(), dst)
        elif isinstance(v, (int, float)):
            for text in [json.dumps(v)] if as_written else _number_texts(v):
                self.prog.text(src, text.encode(), dst)
        elif isinstance(v, str):
            self.literal_string([v], src, dst)
        elif isinstance(v, list):
            self.sequence(v, b"[", b"]", src, dst, lambda item, a, b: self.literal_value(item, a, b, as_written))
        else:  # an object (``build`` refused a value JSON cannot write)
            def member(kv, a, b):
                key_end = self.state(a)
                self.literal_string([kv[0]], a, key_end)
                self.literal_value(kv[1], self.punct_to(key_end, b":"), b, as_written)
            self.sequence(list(v.items()), b"{", b"}", src, dst, member)

    def sequence(self, items, open_: bytes, close: bytes, src: int, dst: int, emit) -> None:
        """``open_`` items separated by commas ``close``, whitespace where JSON allows it."""
        cur = self.state(src)
        self.prog.text(src, open_, cur)
        for i, item in enumerate(items):
            start = self.separated(cur, i)
            cur = self.state(src)
            emit(item, start, cur)
        end = self.state(src)
        self.ws(cur, end)
        self.prog.text(end, close, dst)

    # -- typed values ---------------------------------------------------------------------------
    def typed(self, node: Node, slot: Slot, src: int, dst: int) -> None:
        """A value of each type ``node`` allows, each lowered from its facet of ``node``."""
        types = set(TYPES) - {"integer"} if node.types is None else set(node.types)
        if "number" in types:
            types.discard("integer")
        if not types:
            self.never(slot, "an empty set of types")
        for t in sorted(types):
            getattr(self, "lower_" + t)(node, slot, src, dst)


    def never(self, slot: Slot, reason: str) -> None:
        self.reasons.append((slot, reason))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            warnings.warn(message, stacklevel=4)




SPELLINGS_MAX = 16  # spellings of one array or object value checked whole (``_spellings``)


def _brings_no_name(part: Node, names: dict) -> bool:
    """Whether allOf branch ``part`` names no property beyond ``names`` (a ``$ref`` or a nested
    ``allOf`` may, unseen)."""
    return part.ref is None and not part.all_of and (
        part.object is None or names.keys() >= part.object.properties.keys())


def _spellings(v) -> list:
    """An array or object value with its integral numbers spelled each way (``[1]``, ``[1.0]``),
    each spelling to be checked whole as ``validate`` judges it (beside ``items: {type: integer}``
    only ``[1]`` is valid; where an ``anyOf`` reads positions apart, only some mixes are): every
    mix up to `SPELLINGS_MAX`, past it as written, all integers, all fractions. Any other value alone."""
    if not isinstance(v, (list, dict)):
        return [v]
    found = []
    _respelled(v, itertools.repeat(None), found)
    if not found:
        return [v]
    mixes = itertools.product((int, float), repeat=len(found)) if 2 ** len(found) <= SPELLINGS_MAX else (
        itertools.repeat(None), itertools.repeat(int), itertools.repeat(float))
    return [_respelled(v, iter(kinds)) for kinds in mixes]


def _respelled(v, kinds, found: list | None = None):
    """``v`` with each integral number in it written as ``next(kinds)`` says (int, float, or None:
    as written); each such number is appended to ``found`` where given."""
    if isinstance(v, bool) or not isinstance(v, (int, float, list, dict)):
        return v
    if isinstance(v, (int, float)):
        if abs(v) >= 1e16 or (isinstance(v, float) and not v.is_integer()):
            return v
        if found is not None:
            found.append(v)
        kind = next(kinds)
        return v if kind is None else kind(v)
    if isinstance(v, list):
        return [_respelled(x, kinds, found) for x in v]
    return {k: _respelled(x, kinds, found) for k, x in v.items()}


def _number_texts(v) -> list[str]:
    """The canonical texts of a numeric literal: as JSON writes it, and integral values both ways."""
    texts = [json.dumps(v)]
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        texts.append(str(int(v)))
    elif isinstance(v, int):
        texts.append(f"{v}.0")
    return texts
