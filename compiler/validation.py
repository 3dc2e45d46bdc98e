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
import math
from fractions import Fraction

from compiler.check import LISTS, check_document, decimal_of, json_equal, numeric_bounds
from compiler.errors import InvalidSchema, SchemaError, UnsupportedKeyword
from compiler.load import load_schema
from compiler.refs import SchemaDocument, child, escape, pointer_of
from compiler import trampoline
from compiler.context import REGEX_DIALECT
from compiler.formats import CHECKED_BUT_OPEN, KNOWN_FORMATS
from compiler.validator_formats import INTEGER_FORMATS, QUOTIENT_LIMIT, portable_matches
from compiler.regex import pattern_dfa
from compiler.unevaluated import KEYWORDS as UNEVALUATED, MAX_DEPTH as UNEVALUATED_DEPTH, Evaluation, TooManyCases

__all__ = ["validate", "Validator", "MAX_DEPTH", "KNOWN_FORMATS", "json_equal"]

MAX_DEPTH = 1000
"""Deepest container nesting accepted in an instance (the root container is level 1)."""



def validate(instance, schema, *, dialect: str = "portable", resources=None) -> list[str]:
    """Return every error of `instance` against `schema` (empty when it is valid).

    Raises the compiler's `InvalidSchema` / `UnsupportedKeyword` for a schema the compiler would
    refuse, whatever the instance.
    """
    return Validator(schema, dialect=dialect, resources=resources).errors(instance)


# --- JSON values -----------------------------------------------------------------------------------

def json_type(x) -> str | None:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):
        return "integer"
    if isinstance(x, float):
        return "number" if math.isfinite(x) else None
    if isinstance(x, str):
        return "string"
    if isinstance(x, (list, tuple)):
        return "array"
    if isinstance(x, dict):
        return "object"
    return None


def has_type(x, kind: str, actual: str) -> bool:
    if kind == "number":
        return actual in ("number", "integer")
    return kind == actual  # 1.0 is not an integer: the grammar writes integers without a fraction


def _show(pointer: str) -> str:
    return pointer or "/"


def _dump(value, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 4] + " ...]"


def _json_problems(instance) -> list[str]:
    """Errors for what is not JSON at all (a set, NaN, a non-string key) or nested too deep."""
    errors: list[str] = []
    stack = [(instance, None, 0)]
    while stack:
        value, path, depth = stack.pop()
        kind = json_type(value)
        if kind is None:
            what = repr(value) if isinstance(value, float) else type(value).__name__
            errors.append(f"{_show(pointer_of(path))}: not a JSON value ({what})")
        elif kind in ("array", "object"):
            if depth + 1 > MAX_DEPTH:
                where = pointer_of(path)
                where = where if len(where) <= 120 else where[:60] + "/.../" + where[-40:].split("/", 1)[-1]
                errors.append(f"{where}: nested deeper than {MAX_DEPTH} levels")
                continue
            if kind == "array":
                stack.extend((v, (path, f"/{i}"), depth + 1) for i, v in enumerate(value))
            else:
                for k, v in value.items():
                    if not isinstance(k, str):
                        errors.append(f"{_show(pointer_of(path))}: object key {k!r} is not a string")
                    else:
                        stack.append((v, (path, "/" + escape(k)), depth + 1))
    return errors


# --- patterns ------------------------------------------------------------------------------------

def _pattern(pattern, pointer: str, via, dialect: str):
    """The compiler's own automaton for `pattern` (ECMA-262 search): the same meaning, the same refusals."""
    try:
        return pattern_dfa(pattern, pointer, dialect=REGEX_DIALECT[dialect])
    except SchemaError as exc:
        exc.via = via
        raise


# --- formats -----------------------------------------------------------------------------------------

def _admits_strings(node: dict) -> bool:
    """Whether ``node``'s ``type`` lets a string through (its format then says something)."""
    kinds = node.get("type")
    return kinds is None or kinds == "string" or isinstance(kinds, list) and "string" in kinds


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
IN_PLACE = ("not", "if", "then", "else")  # beside LISTS: keywords whose subschema meets the same instance



class Validator:
    """A schema loaded and checked once, ready to validate many instances."""

    def __init__(self, schema, *, dialect: str = "portable", resources=None, document: SchemaDocument | None = None):
        if dialect not in REGEX_DIALECT:
            raise ValueError(f"dialect must be 'portable' or 'spec', not {dialect!r}")
        self.dialect = dialect
        if document is None:
            self.document = SchemaDocument(load_schema(schema, resources))
            self.root = self.document.root
        else:  # a schema the compiler wrote from ``document``'s: its `$ref`s mean what they mean there
            self.document, self.root = document, schema
        self._patterns: dict[int, object] = {}   # id(schema) -> compiled pattern
        self._pattern_props: dict[int, list] = {}  # id(schema) -> [(compiled, subschema)]
        self._unevaluated: dict[int, list] = {}  # id(schema) -> the schemas its unevaluated* keywords became
        # id(schema) -> its unevaluatedProperties, where that became too many cases: each instance's
        # evaluated names are gathered as it is validated instead (``_evaluated``)
        self._by_instance: dict[int, object] = {}
        self._evaluation = Evaluation(self.document)
        self._check_schema()

    # -- static check of the schema -----------------------------------------------------------------

    def _check_schema(self) -> None:
        """Walk every reachable subschema once (``check.check_document``): refuse what the compiler
        refuses, resolve refs, and make what validating needs (patterns, unevaluated rewrites)."""
        reached, self._refs = check_document(self.document, self.root, self._prepare)
        self._check_cycles(reached)

    def _prepare(self, holder: dict, node: dict, where, path, via) -> list:
        """A checked schema object's patterns, format checker and unevaluated keywords' rewrite;
        returns the rewrite's subschemas as children to check."""
        if "pattern" in node:
            self._patterns[id(node)] = _pattern(node["pattern"], child(where(), "pattern"), via, self.dialect)
        if "format" in node and _admits_strings(node):  # the lowering reads a format only in a string
            fmt = node["format"]
            if fmt in KNOWN_FORMATS:
                _checker(fmt, child(where(), "format"), via)
            elif fmt in CHECKED_BUT_OPEN:
                raise UnsupportedKeyword(child(where(), "format"), "format", f"format {fmt!r} is not enforced", via)
        if "patternProperties" in node:
            self._pattern_props[id(node)] = [
                (_pattern(pat, child(where(), "patternProperties", pat), via, self.dialect), value)
                for pat, value in node["patternProperties"].items()]
        if not any(key in node for key in UNEVALUATED):
            return []
        ignored = self.document.ignored_in(holder)
        try:
            written = self._evaluation.rewrite(node, where(), ignored).get("allOf", [])[len(node.get("allOf", ())):]
        except TooManyCases as exc:  # more than the compile's bound: judged instance by instance instead
            if exc.keyword != "unevaluatedProperties" or "unevaluatedItems" in node:
                raise
            self._by_instance[id(holder)] = node["unevaluatedProperties"]
            return [(node["unevaluatedProperties"], (path, "/unevaluatedProperties"), via)]
        self._unevaluated[id(holder)] = written
        return [(value, (path, "/unevaluatedProperties"), via) for value in written]

    def _check_cycles(self, reached: dict) -> None:
        """A `$ref` loop that never descends into the instance (``{"$ref": "#"}``) cannot be lowered."""
        def edges(node):  # the subschemas applied to the same instance (in place)
            ignored = self.document.ignored_in(node)  # another draft's keywords
            out = [b for key in LISTS for b in node.get(key, ()) if isinstance(b, dict)]
            out += [node[key] for key in IN_PLACE if isinstance(node.get(key), dict) and key not in ignored]
            for key in ("dependentSchemas", "dependencies"):
                if isinstance(node.get(key), dict) and key not in ignored:
                    out += [b for b in node[key].values() if isinstance(b, dict)]
            target = self._refs.get(id(node))
            if isinstance(target, dict):
                out.append(target)
            return iter(out)

        state: dict[int, int] = {}  # 1: on the depth-first stack, 2: finished
        for start, _, _ in reached.values():
            if id(start) in state:
                continue
            state[id(start)] = 1
            stack = [(start, edges(start))]
            while stack:
                node, pending = stack[-1]
                following = next(pending, None)
                if following is None:
                    state[id(node)] = 2
                    stack.pop()
                elif state.get(id(following)) == 1:
                    loop = [n for n, _ in stack[[id(n) for n, _ in stack].index(id(following)):]]
                    holder = next(n for n in loop if id(n) in self._refs)
                    _, path, via = reached[id(holder)]
                    raise InvalidSchema(pointer_of(path), f"$ref {holder['$ref']!r} loops back without "
                                                          "descending into the instance", via)
                elif id(following) not in state:
                    state[id(following)] = 1
                    stack.append((following, edges(following)))

    # -- validation -------------------------------------------------------------------------------

    def errors(self, instance) -> list[str]:
        """Every error of `instance`, in document order of the instance."""
        problems = _json_problems(instance)
        if problems:
            return problems
        return trampoline.run(self._visit(instance, self.root, None), lambda request: self._visit(*request))

    def is_valid(self, instance) -> bool:
        return not self.errors(instance)


    def _visit(self, instance, schema, path):
        """Generator: yields ``(instance, schema, path)`` for each child check, returns the errors."""
        if schema is True:
            return []
        if schema is False:
            return [f"{_show(pointer_of(path))}: not allowed"]
        if self.document.ref_alone and "$ref" in schema:
            return (yield (instance, self._refs[id(schema)], path))
        errors: list[str] = []
        actual = json_type(instance)
        kinds = schema.get("type")
        if kinds is not None:
            listed = kinds if isinstance(kinds, list) else [kinds]
            if not any(has_type(instance, k, actual) for k in listed):
                return [f"{_show(pointer_of(path))}: expected {' or '.join(listed)}"]
        if "enum" in schema and not any(json_equal(instance, v) for v in schema["enum"]):
            errors.append(f"{_show(pointer_of(path))}: must be one of {_dump(schema['enum'])}")
        ignored = self.document.ignored_in(schema)  # another draft's keywords
        if "const" in schema and "const" not in ignored and not json_equal(instance, schema["const"]):
            errors.append(f"{_show(pointer_of(path))}: must be {_dump(schema['const'])}")
        if actual == "string":
            errors.extend(self._string(instance, schema, path))
        elif actual in ("integer", "number"):
            errors.extend(self._number(instance, schema, path))
        elif actual == "object":
            errors.extend((yield from self._object(instance, schema, path)))
        elif actual == "array":
            errors.extend((yield from self._array(instance, schema, path)))
        if "$ref" in schema:
            errors.extend((yield (instance, self._refs[id(schema)], path)))
        if id(schema) in self._by_instance and actual == "object":
            seen = yield from self._evaluated(instance, schema, path, True)
            for name, value in instance.items():
                if seen is not ALL and name not in seen:
                    errors.extend((yield (value, self._by_instance[id(schema)], (path, "/" + escape(name)))))
        for branch in (*schema.get("allOf", ()), *self._unevaluated.get(id(schema), ())):
            for e in (yield (instance, branch, path)):
                if e not in errors:
                    errors.append(e)
        if "anyOf" in schema:
            results = []
            for branch in schema["anyOf"]:
                result = yield (instance, branch, path)
                if not result:
                    break
                results.append(result)
            else:
                errors.extend(_no_branch(results, pointer_of(path), "anyOf"))
        if "not" in schema and not (yield (instance, schema["not"], path)):
            errors.append(f"{_show(pointer_of(path))}: must not match the schema under 'not'")
        if "if" in schema and "if" not in ignored:
            branch = "then" if not (yield (instance, schema["if"], path)) else "else"
            if branch in schema:
                errors.extend((yield (instance, schema[branch], path)))
        if actual == "object":
            for key in ("dependentRequired", "dependentSchemas", "dependencies"):
                for name, need in (schema.get(key, {}) if key not in ignored else {}).items():
                    if name not in instance:
                        continue
                    if isinstance(need, list):
                        errors.extend(f"{_show(pointer_of((path, '/' + escape(r))))}: required when {name!r} is present"
                                      for r in need if r not in instance)
                    else:
                        errors.extend((yield (instance, need, path)))
        if "oneOf" in schema:
            results = []
            for branch in schema["oneOf"]:
                results.append((yield (instance, branch, path)))
            passing = [i for i, r in enumerate(results) if not r]
            if not passing:
                errors.extend(_no_branch(results, pointer_of(path), "oneOf"))
            elif len(passing) > 1:
                errors.append(f"{_show(pointer_of(path))}: matches more than one alternative of oneOf "
                              f"({', '.join(map(str, passing))})")
        return errors

    def _evaluated(self, instance: dict, schema, path, holder: bool = False, depth: int = 0):
        """Generator: the names of ``instance`` that ``schema`` (which it passes) and the in-place
        subschemas it passes evaluate, or ``ALL`` (annotations, as the specification collects them);
        the ``holder``'s own unevaluatedProperties is what asks."""
        if not isinstance(schema, dict):
            return set()
        if depth > UNEVALUATED_DEPTH:
            raise UnsupportedKeyword(pointer_of(path), "unevaluatedProperties",
                                     f"in-place subschemas nested over {UNEVALUATED_DEPTH} deep")
        if "additionalProperties" in schema or ("unevaluatedProperties" in schema and not holder):
            return ALL
        seen = {name for name in instance if name in schema.get("properties", {})}
        seen |= {name for name in instance for compiled, _ in self._pattern_props.get(id(schema), ())
                 if compiled.matches(name)}
        parts = list(schema.get("allOf", ()))
        if "$ref" in schema:
            parts.append(self._refs[id(schema)])
        for key in ("anyOf", "oneOf"):
            for branch in schema.get(key, ()):
                if not (yield (instance, branch, path)):
                    parts.append(branch)
        if "if" in schema:
            passed = not (yield (instance, schema["if"], path))
            parts += [schema["if"], schema.get("then", True)] if passed else [schema.get("else", True)]
        parts += [sub for name, sub in schema.get("dependentSchemas", {}).items() if name in instance]
        for part in parts:
            more = yield from self._evaluated(instance, part, path, depth=depth + 1)
            if more is ALL:
                return ALL
            seen |= more
        return seen

    def _string(self, instance: str, schema: dict, path) -> list[str]:
        errors = []
        if "minLength" in schema and len(instance) < schema["minLength"]:
            errors.append(f"{_show(pointer_of(path))}: shorter than {_num(schema['minLength'])}")
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            errors.append(f"{_show(pointer_of(path))}: longer than {_num(schema['maxLength'])}")
        if "pattern" in schema and not self._patterns[id(schema)].matches(instance):
            errors.append(f"{_show(pointer_of(path))}: does not match pattern {_dump(schema['pattern'])}")
        fmt = schema.get("format")
        if (fmt in KNOWN_FORMATS and not _format_checker.conforms(instance, fmt)) or (
                self.dialect == "portable" and isinstance(fmt, str) and not portable_matches(fmt, instance)):
            errors.append(f"{_show(pointer_of(path))}: not a valid {fmt}")
        return errors

    def _number(self, instance, schema: dict, path) -> list[str]:
        errors = []
        value = decimal_of(instance)
        where = lambda: _show(pointer_of(path))  # noqa: E731
        lo, hi, xlo, xhi = numeric_bounds(schema)
        if lo is not None and value < decimal_of(lo):
            errors.append(f"{where()}: below minimum {_num(lo)}")
        if hi is not None and value > decimal_of(hi):
            errors.append(f"{where()}: above maximum {_num(hi)}")
        if xlo is not None and value <= decimal_of(xlo):
            errors.append(f"{where()}: at or below exclusive minimum {_num(xlo)}")
        if xhi is not None and value >= decimal_of(xhi):
            errors.append(f"{where()}: at or above exclusive maximum {_num(xhi)}")
        if "multipleOf" in schema:
            quotient = Fraction(value) / Fraction(decimal_of(schema["multipleOf"]))
            if quotient.denominator != 1:
                errors.append(f"{where()}: not a multiple of {_num(schema['multipleOf'])}")
            elif self.dialect == "portable" and abs(quotient) >= QUOTIENT_LIMIT:
                errors.append(f"{where()}: too large a multiple of {_num(schema['multipleOf'])} for Ajv to check")
        fmt = schema.get("format")
        if self.dialect == "portable" and isinstance(fmt, str) and fmt in INTEGER_FORMATS:
            bounds = INTEGER_FORMATS[fmt]
            if value != value.to_integral_value() or (bounds and not bounds[0] <= value <= bounds[1]):
                errors.append(f"{where()}: not an {fmt}")
        return errors

    def _object(self, instance: dict, schema: dict, path):
        errors = []
        for name in schema.get("required", ()):
            if name not in instance:
                errors.append(f"{_show(pointer_of((path, '/' + escape(name))))}: required")
        if "minProperties" in schema and len(instance) < schema["minProperties"]:
            errors.append(f"{_show(pointer_of(path))}: fewer than {_num(schema['minProperties'])} properties")
        if "maxProperties" in schema and len(instance) > schema["maxProperties"]:
            errors.append(f"{_show(pointer_of(path))}: more than {_num(schema['maxProperties'])} properties")
        if "propertyNames" in schema and "propertyNames" not in self.document.ignored_in(schema):
            for name in instance:
                if (yield (name, schema["propertyNames"], path)):
                    errors.append(f"{_show(pointer_of(path))}: property name {_dump(name)} is not allowed")
        properties = schema.get("properties", {})
        patterns = self._pattern_props.get(id(schema), ())
        additional = schema.get("additionalProperties", True)
        if not properties and not patterns and additional is True:
            return errors
        for name, value in instance.items():
            child = (path, "/" + escape(name))
            matched = name in properties
            if matched:
                errors.extend((yield (value, properties[name], child)))
            for compiled, sub in patterns:
                if compiled.matches(name):
                    matched = True
                    errors.extend((yield (value, sub, child)))
            if not matched and additional is not True:
                errors.extend((yield (value, additional, child)))
        return errors

    def _array(self, instance, schema: dict, path):
        errors = []
        if "minItems" in schema and len(instance) < schema["minItems"]:
            errors.append(f"{_show(pointer_of(path))}: fewer than {_num(schema['minItems'])} items")
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            errors.append(f"{_show(pointer_of(path))}: more than {_num(schema['maxItems'])} items")
        items = schema.get("items")
        if isinstance(items, list):  # draft 4-2019 tuple form
            prefix, rest = items, schema.get("additionalItems", True)
        else:
            prefix = () if "prefixItems" in self.document.ignored_in(schema) else schema.get("prefixItems", ())
            rest = True if items is None else items
        for i, value in enumerate(instance):
            sub = prefix[i] if i < len(prefix) else rest
            if sub is not True:
                errors.extend((yield (value, sub, (path, f"/{i}"))))
        if "contains" in schema and "contains" not in self.document.ignored_in(schema):
            matches = 0
            for value in instance:
                matches += not (yield (value, schema["contains"], path))
            counted = "minContains" not in self.document.ignored_in(schema)
            least, most = (schema.get("minContains", 1), schema.get("maxContains")) if counted else (1, None)
            if matches < least:
                errors.append(f"{_show(pointer_of(path))}: fewer than {_num(least)} items match 'contains'")
            if most is not None and matches > most:
                errors.append(f"{_show(pointer_of(path))}: more than {_num(most)} items match 'contains'")
        return errors


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
