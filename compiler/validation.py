"""Validation with the compiler's semantics, for output that did not come through our masks.

`validate(instance, schema)` returns errors as ``"<instance pointer>: <what is wrong>"`` (the root is
written ``/``), worded so that a model can act on them. It covers exactly the keywords the compiler
implements (``compiler.keywords.IMPLEMENTED``) with the same meaning: integers are written as
integers (``1.0``, ``true`` and ``3.5`` are not), numbers compare exactly as the decimal text they serialise to,
``enum``/``const`` use JSON equality (``true != 1``, ``1 == 1.0``), strings compare and count by
Unicode scalar, ``pattern`` is an unanchored ECMA-262 search, and ``$ref`` resolves through the
compiler's `SchemaDocument`. A schema the compiler would refuse is refused here with the same error.
``dialect="portable"`` (the default, as for ``compile``) accepts what every common validator
accepts: a ``pattern`` must match in Python's ``re`` too, and a format where Ajv is stricter must
pass Ajv's reading too (``compiler.validator_formats``); ``"spec"`` reads the specification alone.

The schema is checked once, statically, over every subschema reachable from the root; instances are
then walked by a trampoline (generators on an explicit stack), so neither a deep schema nor a deep
instance can exhaust Python's recursion limit.
"""

from __future__ import annotations

import json
from fractions import Fraction

from compiler.build import Reader
from compiler.errors import SchemaError, UnsupportedKeyword
from compiler.ir import ABSENT, ANY, NEVER, ArrayRules, Node, ObjectRules, subnodes
from compiler.load import load_schema
from compiler.refs import SchemaDocument, child, escape, pointer_of
from compiler import trampoline
from compiler.context import REGEX_DIALECT
from compiler.formats import CHECKED_BUT_OPEN, KNOWN_FORMATS
from compiler.validator_formats import INTEGER_FORMATS, QUOTIENT_LIMIT, loose_matches, portable_matches
from compiler.regex import either_dfa, pattern_dfa
from compiler.values import MAX_DEPTH, decimal_of, has_type, json_equal, json_problems, json_type
from compiler.unevaluated import MAX_DEPTH as UNEVALUATED_DEPTH, Evaluation, TooManyCases

__all__ = ["validate", "Validator", "MAX_DEPTH", "KNOWN_FORMATS", "json_equal"]


def validate(instance, schema, *, dialect: str = "portable", resources=None) -> list[str]:
    """Return every error of `instance` against `schema` (empty when it is valid).

    Raises the compiler's `InvalidSchema` / `UnsupportedKeyword` for a schema the compiler would
    refuse, whatever the instance.
    """
    return Validator(schema, dialect=dialect, resources=resources).errors(instance)


# --- JSON values -----------------------------------------------------------------------------------

def _show(pointer: str) -> str:
    return pointer or "/"


def _dump(value, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 4] + " ...]"


def _json_problems(instance) -> list[str]:
    """Errors for what is not JSON at all (a set, NaN, a non-string key) or nested too deep."""
    errors = []
    for path, what, _ in json_problems(instance):
        where = pointer_of(path)
        where = where if len(where) <= 120 else where[:60] + "/.../" + where[-40:].split("/", 1)[-1]
        errors.append(f"{_show(where)}: {what}")
    return errors


# --- formats -----------------------------------------------------------------------------------------

_format_checker = None


def _checker(fmt: str, pointer: str, via):
    """python-jsonschema's 2020-12 format checker, loaded on first use; refuses a known format it
    cannot check. (A bare ``FormatChecker()`` is not it: there ``time`` is draft 3's ``HH:MM:SS``.)"""
    global _format_checker
    if _format_checker is None:
        try:
            from jsonschema import Draft202012Validator
        except ImportError:
            raise UnsupportedKeyword(pointer, "format", f"checking {fmt!r} needs the jsonschema "
                                                        "package (pip install 'jsonschema[format]')", via)
        _format_checker = Draft202012Validator.FORMAT_CHECKER
    if fmt not in _format_checker.checkers:
        raise UnsupportedKeyword(pointer, "format", f"checking {fmt!r} needs jsonschema's format "
                                                    "extras (pip install 'jsonschema[format]')", via)
    return _format_checker


# --- the validator -----------------------------------------------------------------------------------

ALL = object()  # every name of an object evaluated (``Validator._evaluated``)


class Validator:
    """A schema loaded and read once (``build``), ready to validate many instances."""

    def __init__(self, schema, *, dialect: str = "portable", resources=None):
        self._start(SchemaDocument(load_schema(schema, resources)), dialect)
        self.schema = self.document.root  # the root as read (its draft's words only)
        reader = Reader(self.document)
        self.root = reader.node(self.schema, None, ())
        reader.run()
        self.prepare(self.root)

    @classmethod
    def of_nodes(cls, document: SchemaDocument, dialect: str) -> "Validator":
        """A validator of nodes read from ``document`` (or made from them) elsewhere: the
        lowering's, which judges literals against the rest of their schema (``prepare`` each
        node before ``is_valid(instance, node)``)."""
        out = cls.__new__(cls)
        out._start(document, dialect)
        return out

    def _start(self, document: SchemaDocument, dialect: str) -> None:
        if dialect not in REGEX_DIALECT:
            raise ValueError(f"dialect must be 'portable' or 'spec', not {dialect!r}")
        self.dialect = dialect
        self.document = document
        self._matchers: dict[str, object] = {}  # pattern -> its compiled automaton
        # pattern -> its automaton where some validator matches it (portable: ECMA-262 or Python's re)
        self._either: dict[str, object] = {} if dialect == "portable" else self._matchers
        self._unevaluated: dict[Node, list] = {}  # node -> the nodes its unevaluated* keywords became
        # node -> its unevaluatedProperties, where that became too many cases: each instance's
        # evaluated names are gathered as it is validated instead (``_evaluated``)
        self._by_instance: dict[Node, Node] = {}
        self._evaluation = Evaluation(document)
        self._prepared: set[Node] = {ANY, NEVER}

    def prepare(self, node: Node) -> None:
        """Prepare ``node`` and every node it reaches, once each (``_prepare``)."""
        todo = [node]
        while todo:
            node = todo.pop()
            if node not in self._prepared:
                self._prepared.add(node)
                self._prepare(node)
                todo += reversed(subnodes(node) + self._unevaluated.get(node, []))  # (depth first, in document order)

    def _prepare(self, node: Node) -> None:
        """Compile ``node``'s patterns, load its format's checker and read its unevaluated keywords'
        rewrite: refuse here what the compiler refuses."""
        where = lambda: pointer_of(node.path)  # noqa: E731
        string = node.string
        if string is not None:
            for pattern in string.patterns + string.not_patterns:
                self._matcher(pattern, child(where(), "pattern"), node.via)
        # the lowering reads a format only where a string is let through
        formats = node.formats if node.types is None or "string" in node.types else ()
        for fmt in formats + (string.not_formats if string is not None else ()):
            if fmt in KNOWN_FORMATS:
                _checker(fmt, child(where(), "format"), node.via)
            elif fmt in CHECKED_BUT_OPEN:
                raise UnsupportedKeyword(child(where(), "format"), "format", f"format {fmt!r} is not enforced", node.via)
        if node.object is not None:
            for pattern, _ in node.object.pattern_properties:
                self._matcher(pattern, child(where(), "patternProperties", pattern), node.via)
            for how, keys, _ in node.object.some_member:
                for pattern in (keys,) if how == "pattern" else keys[1] if how == "outside" else ():
                    self._matcher(pattern, child(where(), "patternProperties", pattern), node.via)
            for patterns, _ in node.object.additional_unless:
                for pattern in patterns:
                    self._matcher(pattern, child(where(), "patternProperties", pattern), node.via)
        if not node.unevaluated:
            return
        try:
            rewritten = self._evaluation.rewrite(node, where())
        except TooManyCases as exc:  # more than the compile's bound: judged instance by instance instead
            if exc.keyword != "unevaluatedProperties" or node.unevaluated_items is not None:
                raise
            self._by_instance[node] = node.unevaluated_properties
            return
        self._unevaluated[node] = rewritten.all_of[len(node.all_of):]

    def _matcher(self, pattern: str, pointer: str, via):
        """The compiler's own automaton for ``pattern`` (ECMA-262 search): the same meaning, the same refusals."""
        found = self._matchers.get(pattern)
        if found is None:
            try:
                found = self._matchers[pattern] = pattern_dfa(pattern, pointer, dialect=REGEX_DIALECT[self.dialect])
            except SchemaError as exc:
                exc.via = via
                raise
        return found

    # -- validation -------------------------------------------------------------------------------

    def errors(self, instance, node: Node | None = None) -> list[str]:
        """Every error of `instance` against the root (or ``node``, prepared), in document order of the instance."""
        problems = _json_problems(instance)
        if problems:
            return problems
        seen: dict = {}  # (id of a node, id of a value) -> (path, its errors): each judged once
        try:
            return trampoline.run(self._visit(instance, self.root if node is None else node, None, False), lambda request: self._once(request, seen))
        finally:
            seen.clear()

    def _once(self, request, seen: dict):
        """The check of ``request`` (``_visit``'s), or its errors where the same value at the same
        place met the same node before: in-place subschemas that fan out through references (a
        few schemas naming millions of paths) cost what the schemas and the value do."""
        instance, node, path, loose = request
        if node is ANY:
            return _returning([])
        key = (id(node), id(instance), loose)
        found = seen.get(key)
        if found is not None and (found[0] is path or found[0] == path):
            return _returning(found[1])
        return self._remembered(self._visit(instance, node, path, loose), key, path, seen)

    @staticmethod
    def _remembered(check, key, path, seen: dict):
        errors = yield from check
        seen[key] = (path, errors)
        return errors

    def is_valid(self, instance, node: Node | None = None) -> bool:
        return not self.errors(instance, node)

    def _visit(self, instance, node: Node, path, loose: bool):
        """Generator: yields ``(instance, node, path, loose)`` for each child check, returns the
        errors. ``loose``: whether some validator of the dialect would take ``instance`` (under a
        ``not``), where the errors say that none would; else whether every one would. The
        portable readings of patterns and formats differ between them (``_string``), so a
        ``not`` reads its schema the other way, and ``if``, ``oneOf`` and a most of ``contains``
        read theirs both ways. In the "spec" dialect there is one reading: ``loose`` stays False."""
        other = not loose if self.dialect == "portable" else loose  # the other reading
        if node is ANY:
            return []
        if node is NEVER:
            return [f"{_show(pointer_of(path))}: not allowed"]
        errors: list[str] = []
        actual = json_type(instance)
        if node.types is not None and not any(has_type(instance, k, actual) for k in node.types):
            return [f"{_show(pointer_of(path))}: expected {' or '.join(node.types)}"]
        if node.enum is not None and not any(json_equal(instance, v) for v in node.enum):
            errors.append(f"{_show(pointer_of(path))}: must be one of {_dump(node.enum)}")
        if node.const is not ABSENT and not json_equal(instance, node.const):
            errors.append(f"{_show(pointer_of(path))}: must be {_dump(node.const)}")
        if node.not_values and any(json_equal(instance, v) for v in node.not_values):
            errors.append(f"{_show(pointer_of(path))}: must not be {_dump(instance)}")
        if actual == "string":
            errors.extend(self._string(instance, node, path, loose))
        elif actual in ("integer", "number"):
            errors.extend(self._number(instance, node, path, loose))
        elif actual == "object" and node.object is not None:
            errors.extend((yield from self._object(instance, node.object, path, loose)))
        elif actual == "array" and node.array is not None:
            errors.extend((yield from self._array(instance, node.array, path, loose)))
        if node.ref is not None:
            errors.extend((yield (instance, node.ref, path, loose)))
        if node in self._by_instance and actual == "object":
            seen = yield from self._evaluated(instance, node, path, loose, True)
            for name, value in instance.items():
                if seen is not ALL and name not in seen:
                    errors.extend((yield (value, self._by_instance[node], (path, "/" + escape(name)), loose)))
        for branch in (*node.all_of, *self._unevaluated.get(node, ())):
            for e in (yield (instance, branch, path, loose)):
                if e not in errors:
                    errors.append(e)
        if node.any_of is not None:
            results = []
            for branch in node.any_of:
                result = yield (instance, branch, path, loose)
                if not result:
                    break
                results.append(result)
            else:
                errors.extend(_no_branch(results, pointer_of(path), "anyOf"))
        if node.not_ is not None and not (yield (instance, node.not_, path, other)):
            errors.append(f"{_show(pointer_of(path))}: must not match the schema under 'not'")
        if node.if_ is not None:
            passes = not (yield (instance, node.if_, path, loose))
            passes_other = passes if other == loose else not (yield (instance, node.if_, path, other))
            some, every = (passes, passes_other) if loose else (passes_other, passes)  # validators passing the test
            then, else_ = node.then or ANY, node.else_ or ANY
            if not loose:  # then wherever some validator passes the test, else wherever some fails it
                for branch in ([then] if some else []) + ([else_] if not every else []):
                    errors.extend((yield (instance, branch, path, loose)))
            elif not (some and not (yield (instance, then, path, loose))) and not (
                    not every and not (yield (instance, else_, path, loose))):
                errors.append(f"{_show(pointer_of(path))}: fails the 'then' or 'else' its 'if' leads to")
        if actual == "object" and node.object is not None:
            for name, need in node.object.dependent:
                if name not in instance:
                    continue
                if isinstance(need, list):
                    errors.extend(f"{_show(pointer_of((path, '/' + escape(r))))}: required when {name!r} is present"
                                  for r in need if r not in instance)
                else:
                    errors.extend((yield (instance, need, path, loose)))
        if node.one_of is not None:
            results = []
            for branch in node.one_of:
                results.append((yield (instance, branch, path, loose)))
            passing = [i for i, r in enumerate(results) if not r]
            # the branches that pass read the other way, which none but the one may (every
            # validator then finds that one alone; or some validator may)
            others = passing
            if other != loose:
                others = []
                for i, branch in enumerate(node.one_of):
                    if not (yield (instance, branch, path, other)):
                        others.append(i)
            if not passing:
                errors.extend(_no_branch(results, pointer_of(path), "oneOf"))
            elif not any(set(others) <= {i} for i in passing):
                errors.append(f"{_show(pointer_of(path))}: matches more than one alternative of oneOf "
                              f"({', '.join(map(str, sorted(set(passing) | set(others))))})")
        return errors

    def _evaluated(self, instance: dict, node: Node, path, loose: bool, holder: bool = False, depth: int = 0):
        """Generator: the names of ``instance`` that ``node`` (which it passes) and the in-place
        subschemas it passes evaluate, or ``ALL`` (annotations, as the specification collects them);
        the ``holder``'s own unevaluatedProperties is what asks."""
        if node is ANY or node is NEVER:
            return set()
        if depth > UNEVALUATED_DEPTH:
            raise UnsupportedKeyword(pointer_of(path), "unevaluatedProperties",
                                     f"in-place subschemas nested over {UNEVALUATED_DEPTH} deep")
        obj = node.object
        if (obj is not None and obj.additional is not None) or (node.unevaluated_properties is not None and not holder):
            return ALL
        seen: set = set()
        parts = list(node.all_of)
        if obj is not None:
            seen = {name for name in instance if name in obj.properties}
            seen |= {name for name in instance for pattern, _ in obj.pattern_properties
                     if self._matchers[pattern].matches(name)}
            parts += [sub for name, sub in obj.dependent_schemas.items() if name in instance]
        if node.ref is not None:
            parts.append(node.ref)
        for branch in (*(node.any_of or ()), *(node.one_of or ())):
            if not (yield (instance, branch, path, loose)):
                parts.append(branch)
        if node.if_ is not None:
            passed = not (yield (instance, node.if_, path, loose))
            parts += [node.if_, node.then or ANY] if passed else [node.else_ or ANY]
        for part in parts:
            more = yield from self._evaluated(instance, part, path, loose, depth=depth + 1)
            if more is ALL:
                return ALL
            seen |= more
        return seen

    def _string(self, instance: str, node: Node, path, loose: bool) -> list[str]:
        """Portable: a pattern matches for every validator where Python's ``re`` and ECMA-262 both
        match it, for some where either does; a format holds for every one where each reading
        takes it, for some where one does. A complement's leaves the other way round."""
        errors = []
        rules = node.string
        every, some = self._matchers, self._either
        if loose:
            every, some = some, every
        if rules is not None:
            if rules.min_length is not None and len(instance) < rules.min_length:
                errors.append(f"{_show(pointer_of(path))}: shorter than {_num(rules.min_length)}")
            if rules.max_length is not None and len(instance) > rules.max_length:
                errors.append(f"{_show(pointer_of(path))}: longer than {_num(rules.max_length)}")
            for pattern in rules.patterns:
                if not self._matcher_in(every, pattern).matches(instance):
                    errors.append(f"{_show(pointer_of(path))}: does not match pattern {_dump(pattern)}")
            for pattern in rules.not_patterns:
                if self._matcher_in(some, pattern).matches(instance):
                    errors.append(f"{_show(pointer_of(path))}: matches pattern {_dump(pattern)}")
            for fmt in rules.not_formats:
                if self._conforms(fmt, instance, not loose):
                    errors.append(f"{_show(pointer_of(path))}: a valid {fmt}")
        for fmt in node.formats:
            if not self._conforms(fmt, instance, loose):
                errors.append(f"{_show(pointer_of(path))}: not a valid {fmt}")
        return errors

    def _matcher_in(self, matchers: dict, pattern: str):
        """``pattern``'s automaton among ``matchers`` (the readings every validator, or some, share)."""
        found = matchers.get(pattern)
        if found is None:  # (the shared reading was made when the schema was read; the other is made here)
            found = matchers[pattern] = either_dfa(pattern)
        return found

    def _conforms(self, fmt, instance: str, loose: bool = False) -> bool:
        """Whether ``instance`` is a valid ``fmt`` for every validator (``loose``: for some)."""
        python = fmt not in KNOWN_FORMATS or _format_checker.conforms(instance, fmt)
        if self.dialect != "portable":
            return python
        if loose:
            return python or loose_matches(fmt, instance)
        return python and portable_matches(fmt, instance)

    def _number(self, instance, node: Node, path, loose: bool) -> list[str]:
        errors = []
        value = decimal_of(instance)
        where = lambda: _show(pointer_of(path))  # noqa: E731
        rules = node.number
        if rules is not None:
            lo, hi, xlo, xhi = rules.bounds
            if lo is not None and value < decimal_of(lo):
                errors.append(f"{where()}: below minimum {_num(lo)}")
            if hi is not None and value > decimal_of(hi):
                errors.append(f"{where()}: above maximum {_num(hi)}")
            if xlo is not None and value <= decimal_of(xlo):
                errors.append(f"{where()}: at or below exclusive minimum {_num(xlo)}")
            if xhi is not None and value >= decimal_of(xhi):
                errors.append(f"{where()}: at or above exclusive maximum {_num(xhi)}")
            for step in rules.multiples:
                wrong = self._not_a_multiple(value, step, loose)
                if wrong:
                    errors.append(f"{where()}: {wrong}")
            for step in rules.not_multiples:
                if not self._not_a_multiple(value, step, not loose):
                    errors.append(f"{where()}: a multiple of {_num(step)}")
            if rules.not_integer and json_type(instance) == "integer":  # (1.0 is no integer: as has_type)
                errors.append(f"{where()}: an integer")
        for fmt in node.formats if self.dialect == "portable" and not loose else ():  # (only Ajv checks these)
            bounds = INTEGER_FORMATS.get(fmt, ())
            if bounds != () and (value != value.to_integral_value() or (bounds and not bounds[0] <= value <= bounds[1])):
                errors.append(f"{where()}: not an {fmt}")
        return errors

    def _not_a_multiple(self, value, step, loose: bool = False) -> str | None:
        """Why ``value`` fails ``multipleOf: step`` for some validator (``loose``: for every one;
        None: it passes)."""
        quotient = Fraction(value) / Fraction(decimal_of(step))
        if quotient.denominator != 1:
            return f"not a multiple of {_num(step)}"
        if self.dialect == "portable" and not loose and abs(quotient) >= QUOTIENT_LIMIT:
            return f"too large a multiple of {_num(step)} for Ajv to check"
        return None

    def _object(self, instance: dict, rules: ObjectRules, path, loose: bool):
        errors = []
        other = not loose if self.dialect == "portable" else loose
        # a key pattern's schema applies where some validator matches it; a schema for the keys no
        # pattern matches, where some matches none (under a ``not``: where every one does)
        applies, escapes = (self._matchers, self._either) if loose else (self._either, self._matchers)
        for name in rules.required:
            if name not in instance:
                errors.append(f"{_show(pointer_of((path, '/' + escape(name))))}: required")
        if rules.min_properties is not None and len(instance) < rules.min_properties:
            errors.append(f"{_show(pointer_of(path))}: fewer than {_num(rules.min_properties)} properties")
        if rules.max_properties is not None and len(instance) > rules.max_properties:
            errors.append(f"{_show(pointer_of(path))}: more than {_num(rules.max_properties)} properties")
        if rules.property_names is not None:
            for name in instance:
                if (yield (name, rules.property_names, path, loose)):
                    errors.append(f"{_show(pointer_of(path))}: property name {_dump(name)} is not allowed")
        for how, keys, wanted in rules.some_member:
            for name, value in instance.items():
                if (how == "names" and (yield (name, keys, path, other))) or (
                        how == "pattern" and self._matcher_in(escapes, keys).matches(name)) or (
                        how == "outside" and name not in keys[0]
                        and not any(self._matcher_in(applies, p).matches(name) for p in keys[1])):
                    if not (yield (value, wanted, (path, "/" + escape(name)), loose)):
                        break
            else:
                errors.append(f"{_show(pointer_of(path))}: no member of the kind 'not' asks for")
        properties, patterns = rules.properties, rules.pattern_properties
        additional, unless = rules.additional, rules.additional_unless
        if not properties and not patterns and additional in (None, ANY) and not unless:
            return errors
        for name, value in instance.items():
            child = (path, "/" + escape(name))
            matched = name in properties
            if matched:
                errors.extend((yield (value, properties[name], child, loose)))
            for pattern, sub in patterns:
                if self._matcher_in(applies, pattern).matches(name):
                    errors.extend((yield (value, sub, child, loose)))
            matched = matched or any(self._matcher_in(escapes, pattern).matches(name) for pattern, _ in patterns)
            if not matched and additional is not None and additional is not ANY:
                errors.extend((yield (value, additional, child, loose)))
            for unless_patterns, sub in unless:
                if name not in properties and not any(self._matcher_in(escapes, p).matches(name) for p in unless_patterns):
                    errors.extend((yield (value, sub, child, loose)))
        return errors

    def _array(self, instance, rules: ArrayRules, path, loose: bool):
        errors = []
        if rules.min_items is not None and len(instance) < rules.min_items:
            errors.append(f"{_show(pointer_of(path))}: fewer than {_num(rules.min_items)} items")
        if rules.max_items is not None and len(instance) > rules.max_items:
            errors.append(f"{_show(pointer_of(path))}: more than {_num(rules.max_items)} items")
        prefix, rest = rules.prefix, rules.rest or ANY
        for i, value in enumerate(instance):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is not ANY:
                errors.extend((yield (value, sub, (path, f"/{i}"), loose)))
        if rules.unique and len(instance) > 1:
            first = _first_repeat(instance)
            if first is not None:
                errors.append(f"{_show(pointer_of(path))}: items {first[0]} and {first[1]} are equal (uniqueItems)")
        for wanted in rules.contains_also:
            for value in instance:
                if not (yield (value, wanted, path, loose)):
                    break
            else:
                errors.append(f"{_show(pointer_of(path))}: no item matches each 'contains'")
        if rules.contains is not None:
            least, most = rules.min_contains, rules.max_contains
            other = not loose if self.dialect == "portable" and most is not None else loose
            matches = more = 0  # items matching in this reading; in the other (read for a most)
            for value in instance:
                matches += not (yield (value, rules.contains, path, loose))
                if most is not None:
                    more += not (yield (value, rules.contains, path, other))
            if matches < least:  # (and at most the most in the other reading: for every validator, or some)
                errors.append(f"{_show(pointer_of(path))}: fewer than {_num(least)} items match 'contains'")
            if most is not None and more > most:
                errors.append(f"{_show(pointer_of(path))}: more than {_num(most)} items match 'contains'")
        return errors


def _returning(value):
    """A generator that asks for nothing and returns ``value``."""
    return value
    yield  # noqa: B901 (a generator, as the trampoline drives)


def _first_repeat(items: list) -> tuple[int, int] | None:
    """The first pair of indices whose items are equal as JSON values, or None. Items are grouped by
    a coarse key (their type, a scalar's value) first, so most arrays cost one pass."""
    seen: dict = {}
    for j, item in enumerate(items):
        kind = json_type(item)
        coarse = (kind, item) if kind in ("string", "boolean", "null") else ("number", decimal_of(item)) \
            if kind in ("integer", "number") else (kind, len(item))
        for i in seen.setdefault(coarse, []):
            if json_equal(items[i], item):
                return i, j
        seen[coarse].append(j)
    return None


def _num(x) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _no_branch(results: list[list[str]], pointer: str, keyword: str) -> list[str]:
    """Word the failure of every alternative: the one branch of the right type, or a summary."""
    shown = _show(pointer)
    type_error = f"{shown}: expected "
    typed = [r for r in results if not (len(r) == 1 and r[0].startswith(type_error))]
    if len(typed) == 1:
        return typed[0]
    if not typed:
        kinds = []
        for r in results:
            for k in r[0][len(type_error):].split(" or "):
                if k not in kinds:
                    kinds.append(k)
        return [f"{type_error}{' or '.join(kinds)}"]
    firsts = "; ".join(r[0] for r in typed[:4])
    return [f"{shown}: matches no alternative of {keyword} ({firsts})"]
