"""Mutation check: break each guard of the literal matcher, the root handling, the boolean
keywords (complements, exactly-one, conditionals, contains, objects met with different patterns),
the unevaluated keywords and the keyword check every compile runs first, JSON equality, the
shipped format table, lazy lowering, counted blocks (patterns' groups, arrays' items), the
portable readings under a ``not``, ``oneOf`` over objects decided member by member, objects
in any order lowered set by set and keys never written twice, one at a time.

Each mutation is a one-line source edit; its group's tests run against a copy of the tree holding
it. A mutation the tests do not catch is a guard nobody tests. Prints caught / survived per
mutation and exits non-zero if any survived.

    python benchmarks/mutation_check.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ["tests/test_literals.py", "tests/test_roots.py"]
BOOLEAN_TESTS = ["tests/test_boolean.py"]
CHECK_TESTS = ["tests/test_compile_errors.py"]
PATTERN_TESTS = ["tests/test_patterns.py"]
EVALUATION_TESTS = ["tests/test_unevaluated.py::test_unevaluated_properties_agree_with_jsonschema",
                    "tests/test_unevaluated.py::test_unevaluated_items_agree_with_jsonschema", "tests/test_refs.py",
                    "tests/test_unevaluated.py::test_past_the_case_bound_the_validator_judges_each_instance",
                    "tests/test_unevaluated.py::test_literals_are_judged_by_the_keywords_below_them",
                    "tests/test_drafts.py"]

PATTERN_MUTATIONS = [
    ("a leading lookahead read the other way", "compiler/regex.py",
     "chardfa.difference(dfa, prefixed) if negated else chardfa.intersect(dfa, prefixed, max_states)",
     "chardfa.intersect(dfa, prefixed, max_states) if negated else chardfa.difference(dfa, prefixed)"),
    ("a portable negative lookahead read narrowly", "compiler/regex.py",
     '"either" if negated and dialect == "portable" else dialect', "dialect"),
]

BOOLEAN_MUTATIONS = [
    ("a not of several parts met with its first part alone", "compiler/lower.py",
     "for part in outside.all_of:  # (a oneOf", "for part in outside.all_of[:1]:  # (a oneOf"),
    ("a side's additionalProperties dropped where the sides' patterns differ", "compiler/merge.py",
     'out.additional_unless = out.additional_unless + [(tuple(sorted(theirs)), y.additional)]',
     'out.ignored = out.additional_unless + [(tuple(sorted(theirs)), y.additional)]'),
    ("a name met later escapes a side's additionalProperties", "compiler/merge.py",
     'for patterns, value in obj.additional_unless:\n                if not any(self.matches', 'for patterns, value in ():\n                if not any(self.matches'),
    ("an unnamed required key escapes a side's additionalProperties", "compiler/containers.py",
     "for patterns, value in obj.additional_unless:", "for patterns, value in ():"),
    ("validate lets a side's additionalProperties go", "compiler/validation.py",
     "for unless_patterns, sub in unless:", "for unless_patterns, sub in ():"),
    ("propertyNames' oneOf: a key in two branches kept", "compiler/scalars.py",
     "out = chardfa.union(out, chardfa.difference(languages[i], chardfa.union(before[i], after)))",
     "out = chardfa.union(out, languages[i])"),
    ("propertyNames' not: the keys it rules out kept", "compiler/scalars.py",
     "parts.append(chardfa.literal_strings([]) if ruled_out is None else chardfa.complement(ruled_out))",
     "parts.append(ruled_out)"),
    ("literals past a complement's bound refused", "compiler/lower.py",
     'except (SchemaTooComplex, UnsupportedKeyword):\n            if node.enum is not None or node.const is not ABSENT:',
     'except (SchemaTooComplex, UnsupportedKeyword):\n            if False:'),
    ("unions beside literals multiplied", "compiler/merge.py",
     "elif literal_values(a) is not None or literal_values(b) is not None:", "elif False:"),
    ("literals met after an allOf's unions", "compiler/lower.py",
     "first = literal or bool(own) and all(", "first = bool(own) and all("),
    ("a side's const beside its enum dropped in a meet", "compiler/merge.py",
     "left, right = literal_values(a), literal_values(b)",
     "left, right = literal_values(a), (b.enum if b.enum is not None else literal_values(b))"),
    ("multipleOf values met: the second dropped", "compiler/numbers.py",
     "math.lcm(*(p.numerator for p in parts))", "math.lcm(*(p.numerator for p in parts[:1]))"),
    ("an object literal's complement without its other keys", "compiler/boolean.py",
     '"additional": NEVER})', '})'),
    ("an array literal's complement without its longer arrays", "compiler/boolean.py",
     '"max_items": len(v),', ''),
    ("an enum's filter: a member outside the names found among the names", "compiler/validation.py",
     'how == "outside" and name not in keys[0]\n', 'how == "outside"\n'),
    ("an enum's filter: a second contains unread", "compiler/validation.py",
     "for wanted in rules.contains_also:", "for wanted in ():"),
    ("a name's schema met with any negation allows nothing", "compiler/merge.py",
     "and same(y.not_, x))", "and True)"),
    ("a union beside a closed object always implied", "compiler/merge.py",
     "and all(sub is NEVER and rules_out(rules, n) for n, sub in b.object.properties.items())", "and True"),
    ("a closed object rules out its own names", "compiler/merge.py",
     "return obj.properties[name] is NEVER\n", "return True\n"),
    ("a required name rules out every object", "compiler/merge.py",
     "rules_out(out, name) for name in out.object.required)", "True for name in out.object.required)"),
    ("one contains met with its own counts keeps the smaller least", "compiler/merge.py",
     "out.min_contains = max(a.min_contains, b.min_contains)", "out.min_contains = min(a.min_contains, b.min_contains)"),
    ("counts beside contains from several branches dropped", "compiler/containers.py",
     "if len(also) > 1 and (least != 1 or most is not None):", "if False:"),
    ("not oneOf without 'two at once'", "compiler/boolean.py",
     "for i, a in enumerate(parts) for b in parts[i + 1:]]", "for i, a in enumerate(parts) for b in parts[i + 1:] if False]"),
    ("not of a keyword its types never meet complements the keyword too", "compiler/boolean.py",
     "return kinds is None or kind in kinds", "return True"),
    ("a name some branches of a branch require taken as required by it", "compiler/one_of.py",
     "required |= set.intersection(*(more for more, _, _ in every))", "required |= set.union(*(more for more, _, _ in every))"),
    ("an additional name's values taken apart from a pin they share", "compiler/one_of.py",
     "if lb == [] or (lb is not None and la is not None and not any(json_in(x, lb) for x in la)):",
     "if lb == [] or (lb is not None and la is not None):"),
    ("not minimum keeps the bound", "compiler/boolean.py",
     'opposite = {"minimum": "exclusive_maximum",', 'opposite = {"minimum": "maximum",'),
    ("not required forbids nothing", "compiler/boolean.py",
     'out = [make(types=("object",), object={"properties": {name: NEVER}}) for name in obj.required]',
     'out = [make(types=("object",)) for name in obj.required]'),
    ("oneOf as anyOf", "compiler/lower.py",
     "alone = exactly_one(node.one_of, overlaps(met))",
     "alone = node.one_of"),
    ("oneOf overlaps never seen", "compiler/one_of.py",
     "if any(a is ANY or b is ANY or not _disjoint(a, b, k, facts[i], facts[j]) for k in common):",
     "if False:"),
    ("several contains: any one found ends the array", "compiler/containers.py",
     "if n >= lo and k >= least and (len(also) < 2 or k == top):", "if n >= lo and k >= least:"),
    ("maxContains not counted", "compiler/containers.py",
     "elif most is None or k + step <= top:", "else:"),
    ("a witness member not required", "compiler/containers.py",
     "if c >= lo and mask == full:", "if c >= lo:"),
    ("draft-4 if applied", "compiler/refs.py",
     'self.ignored = _LATER_WORDS.get(named, frozenset({"dependencies"} if named else ()))',
     "self.ignored = frozenset()"),
    ("oneOf proof reads what a $ref hides", "compiler/one_of.py",
     "        node = node.ref\n    return node", "        break\n    return node"),
    ("oneOf proof takes a declared name for a forbidden one", "compiler/one_of.py",
     'elif name not in obj.properties and not _may_match([p for p, _ in obj.pattern_properties], name):',
     'elif not _may_match([p for p, _ in obj.pattern_properties], name):'),
    ("oneOf proof takes a key pattern that may match a name for one that cannot", "compiler/one_of.py",
     "if either_dfa(pattern).matches(name):", "if False:"),
    ("else case without not if", "compiler/boolean.py",
     "make(all_of=[make(not_=test), else_])", "make(all_of=[else_])"),
    ("anyOf product keeps the pairs their names rule out", "compiler/products.py",
     "return not any(name in pins and not pins[name] - excluded.get(name, frozenset()) for name in required)",
     "return True"),
    ("not of an if that required its name requires it too", "compiler/products.py",
     'return (frozenset() if obj.required else frozenset([name])), {}, {name: keys}',
     'return frozenset([name]), {}, {name: keys}'),
    ("anyOf product: branches of the same types taken for the same branch", "compiler/merge.py",
     "return x is y or self.alike and same(x, y)",
     "return x is y or self.alike and kinds_of(x.types) == kinds_of(y.types)"),
]

MUTATIONS = [
    ("a number inside an enum value spelled both ways beside keywords", "compiler/lower.py",
     "for text in [json.dumps(v)] if as_written else _number_texts(v):", "for text in _number_texts(v):"),
    ("hex digit unchecked", "compiler/strings.py",
     "    out = []\n    if lo <= 9:", "    return [(0x30, 0x7A)]\n    out = []\n    if lo <= 9:"),
    ("upper-case hex refused", "compiler/strings.py",
     "out += [(0x61 + a, 0x61 + b), (0x41 + a, 0x41 + b)]", "out += [(0x61 + a, 0x61 + b)]"),
    ("low surrogate not required", "compiler/strings.py",
     "out += [prefix + high + prefix + low for high, low in", "out += [prefix + high for high, low in"),
    ("low surrogate off by one", "compiler/strings.py",
     "_hex4_paths(0xDC00 + l1, 0xDC00 + l2)", "_hex4_paths(0xDC00 + l1, 0xDC01 + l2)"),
    ("raw control characters allowed", "compiler/strings.py",
     "return list(subtract_points(_intersect(ranges, 0x20, 0x7F)", "return list(subtract_points(_intersect(ranges, 0x00, 0x7F)"),
    ("raw quote allowed", "compiler/strings.py", "0x7F), (QUOTE, BACKSLASH)))", "0x7F), (BACKSLASH,)))"),
    ("short escape \\n dropped", "compiler/strings.py", '0x0A: ord("n"), ', ""),
    ("short escape \\t dropped", "compiler/strings.py", ' 0x09: ord("t")}', "}"),
    ("plain ASCII allowed escaped", "compiler/strings.py",
     "escapable += list(_intersect(ranges, 0x80, 0x10FFFF))", "escapable += list(_intersect(ranges, 0x00, 0x10FFFF))"),
    ("solidus escape in literals", "compiler/strings.py", "if not literal and members(SOLIDUS):", "if members(SOLIDUS):"),
    ("non-ASCII escape refused in literals", "compiler/strings.py",
     "escapable += list(_intersect(ranges, 0x80, 0x10FFFF))", "pass"),
    ("surrogates allowed (raw and escaped)", "compiler/strings.py",
     "ranges = list(_without_surrogates(ranges))", "ranges = list(ranges)"),
    ("keys beyond the names spelled as free strings", "compiler/scalars.py",
     "plan = self.string_plan(rest, plans, spelling == KEY)", "plan = self.string_plan(rest, plans, False)"),
    ("keys beyond the names as a block spelled as free strings", "compiler/scalars.py",
     "self.counted_string(dfa, 0, None, *self.quotes(src, dst), literal=True)",
     "self.counted_string(dfa, 0, None, *self.quotes(src, dst))"),
    ("a place loops on whitespace in bounded mode", "compiler/containers.py",
     'if self.options.whitespace != "flexible":\n            dst = self.state(src)',
     'if self.options.whitespace == "compact":\n            dst = self.state(src)'),
    ("any-root default changed to objects", "compiler/lower.py",
     'types = set(TYPES) - {"integer"}', 'types = {"object"}'),
    ("any value without null", "compiler/containers.py",
     'for kind in ("null", "boolean", "number", "string", "array", "object"):',
     'for kind in ("boolean", "number", "string", "array", "object"):'),
    ("false root treated as any", "compiler/lower.py",
     "            return self.never(slot, \"'false' schema\")",
     "            return self.any_value(src, dst)"),
    ("whitespace allowed around the root", "compiler/lower.py",
     "            root = self.fragment(self.root, Slot(\"\"))",
     "            inner = self.fragment(self.root, Slot(\"\")); root = self.prog.new_fragment(); "
     "f = self.prog.fragments[root]; a, b = self.state(f.start), self.state(f.start); "
     "self.ws(f.start, a); self.prog.call(a, inner, b); self.ws(b, f.final)"),
]


def run(name: str, path: str, old: str, new: str, tests: list[str]) -> bool:
    """True when the tests fail against the mutated tree (the mutation is caught)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", ".hypothesis", "*.egg-info"))
        target = copy / path
        source = target.read_text()
        if source.count(old) != 1:
            raise SystemExit(f"mutation {name!r}: the guard to break was not found once in {path}")
        target.write_text(source.replace(old, new))
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                              cwd=copy, capture_output=True, text=True, env={"PYTHONPATH": str(copy), "PATH": ""})
        return proc.returncode != 0


EVALUATION_MUTATIONS = [
    ("a $ref's siblings dropped where it meets", "compiler/lower.py",
     "n = target if trivial(rest) else rest if target is ANY else Meet(", "n = target if True else rest if target is ANY else Meet("),
    ("validate takes a failing branch's names as evaluated", "compiler/validation.py",
     "if not (yield (instance, branch, path, loose)):\n                parts.append(branch)",
     "if (yield (instance, branch, path, loose)) or True:\n                parts.append(branch)"),
    ("anyOf: one passing branch at a time", "compiler/unevaluated.py",
     'self.product(options, branch) if applicator == "anyOf" else branch', "branch"),
    ("an anyOf branch's case holds without the branch", "compiler/unevaluated.py",
     "branches = [[(both_nodes(b, cond), seen)", "branches = [[(cond, seen)"),
    ("a literal judged without its schema's unevaluated keywords", "compiler/lower.py",
     "        self._validator.prepare(node)\n", "        pass\n"),
    ("a dependency's case holds without its name", "compiler/boolean.py",
     'present = make(object={"required": [name]}, all_of=[present])', "present = make(all_of=[present])"),
    ("contains evaluates nothing", "compiler/unevaluated.py",
     "contains = (arr.contains,) if arr.contains is not None and not arr.listed and self.doc.contains_evaluates else ()",
     "contains = ()"),
    ("a nested unevaluated keyword evaluates nothing more", "compiler/unevaluated.py",
     "everything=obj.additional is not None or own and node.unevaluated_properties is not None)",
     "everything=obj.additional is not None)"),
    ("relative $ref left relative", "compiler/refs.py",
     "node[word] = _join(base, node[word])", "pass"),
    ("a $ref made absolute under a relative base joined again", "compiler/refs.py",
     "if self.has_ids and uri not in self._resources and not ref.startswith", "if False and uri not in self._resources and not ref.startswith"),
    ("a $ref keeps its siblings in a draft 7 document", "compiler/refs.py",
     '({"$ref": node["$ref"]} if self.ref_alone and "$ref" in node else node).items()', "node.items()"),
    ("another draft's words read", "compiler/refs.py", "if key not in self.ignored:\n", "if True:\n"),
    ("a document with words its draft does not read read as written", "compiler/refs.py",
     "self._unread = True\n", "pass\n"),
    ("a $ref target outside the schema keywords read as written", "compiler/refs.py",
     "self._as_read(node)  # outside", "pass  # outside"),
]


CHECK_MUTATIONS = [
    ("compile skips the keyword check", "compiler/lower.py", "        reader.run()\n", "        pass\n"),
    ("enum's shape unchecked", "compiler/build.py",
     'if not isinstance(rules["enum"], list):', "if False:"),
    ("a $ref target is not checked", "compiler/build.py",
     'node.ref = self.node(target, (None, target_pointer) if target_pointer else None, via + (ref,))',
     'node.ref = ANY'),
    ("a $ref loop is searched for from the first target alone", "compiler/build.py",
     "for start in self._targets:", "for start in self._targets[:1]:"),
]


VALUE_TESTS = ["tests/test_validate.py", "tests/test_prebuilt.py"]
VALUE_MUTATIONS = [
    ("numbers compared as Python does, not by their decimal text", "compiler/values.py",
     "if decimal_of(a) != decimal_of(b):", "if a != b:"),
    ("a table of other code read", "compiler/prebuilt.py",
     'return table if table.get("fingerprint") == fingerprint() else {}', 'return table'),
]

LAZY_TESTS = ["tests/test_lazy.py"]
LAZY_MUTATIONS = [
    ("a waiting value's literals read from its enum alone", "compiler/deferral.py",
     "values = [v for v in literal_values(node) if not json_in(v, node.not_values)]",
     "values = [v for v in (node.enum if node.enum is not None else [node.const]) if not json_in(v, node.not_values)]"),
    ("several key patterns wait", "compiler/deferral.py",
     "if len(obj.pattern_properties) > 1:", "if False:"),
    ("a key pattern naming a property waits", "compiler/deferral.py",
     "if any(dfa.matches(name) for name in names):", "if False:"),
    ("any value needs no recursive frame", "compiler/deferral.py",
     "return frames > 0  # any value: the recursive fragment", "return True"),
    ("a required name outside the properties taken as inhabited", "compiler/deferral.py",
     "return all(name in obj.properties and self._inhabited_sub(obj.properties[name], frames)",
     "return all(name not in obj.properties or self._inhabited_sub(obj.properties[name], frames)"),
    ("a segment's return states read as old ones", "automaton/program.py",
     "if frags[g].start >= first:  # a fragment of this segment", "if False:"),
    ("an empty enum taken as inhabited", "compiler/deferral.py",
     "return any(node.types is None or any(has_type(v, k, json_type(v)) for k in node.types) for v in values)",
     "return node.types is None or any(any(has_type(v, k, json_type(v)) for k in node.types) for v in values)"),
    ("a waiting fragment's size left out of the budget", "compiler/lower.py",
     "if self.prog.weight + sum(weight for _, _, weight in self._waiting.values()) > self.options.max_states:",
     "if False:"),
    ("a pattern's match taken as fitting any length bounds", "compiler/deferral.py",
     "return outline.every_length or shortest >= lo", "return True"),
    ("a pattern's matches taken to come in every longer length", "compiler/regex.py",
     "_shortest(found), False, found.size", "_shortest(found), True, found.size"),
    ("an allOf met as its first branch alone", "compiler/lower.py",
     'else self.all_of(rules, slot)', 'else rules["allOf"][0]'),
    ("an array with contains taken as inhabited without a match", "compiler/deferral.py",
     "and all(self._inhabited_sub(m, frames) for m in matches) and", "and"),
    ("a fraction taken as an integer's value", "compiler/deferral.py",
     "return not integer and (low is None", "return (low is None"),
    ("an enum's excluded values kept when judging it", "compiler/deferral.py",
     "values = [v for v in literal_values(node) if not json_in(v, node.not_values)]", "values = literal_values(node)"),
]

COUNTED_TESTS = ["tests/test_counted_lengths.py"]
COUNTED_MUTATIONS = [
    ("an iteration begun twice before a character", "compiler/regex.py",
     "if q != r:  # a second iteration begun before a character", "if False:"),
    ("a pending iteration forgotten past an epsilon move", "compiler/regex.py",
     "nxt = [t + n for t in nxt]", "nxt = list(nxt)"),
    ("a match begun later counted from zero", "compiler/regex.py", "if counting and base:", "if False:"),
    ("the last count reads on", "automaton/counted.py",
     "return q, base, 2 * self.width if n < self.hi else self.width", "return q, base, 2 * self.width"),
    ("each scalar of a group counted", "compiler/counting.py",
     "cost = 1 if stepped is None or t in stepped else 0", "cost = 1"),
    ("no item needed after a comma", "compiler/counting.py",
     "(0,) * (2 * k) + (1,) * k, ())", "(0,) * (3 * k), ())"),
    ("a comma closes the array", "compiler/counting.py",
     "accepting = bytes([1] * (2 * k) + [0] * k)", "accepting = bytes([1] * (3 * k))"),
    ("a whitespace run past its bound", "compiler/counting.py",
     "place + i + 1 if i < run else -1", "place + min(i + 1, run)"),
    ("an array's item left out of the recursion marks", "automaton/program.py",
     "succ[block.owner].update(block.fragments)", "pass"),
    ("a key's escaped-only letter written raw by the other keys' template", "compiler/counting.py",
     "if lo in _RAW_POINTS:", "if lo < 0x80:"),
    ("the other keys' gaps read as if no name went on", "compiler/counting.py",
     "for lo, hi in _raw_gaps(tuple(raw))]", "for lo, hi in _raw_gaps(())]"),
    ("counted states weigh as written ones against max_states", "automaton/program.py",
     "self._counted_weight += -(-block.size // COUNTED_SHARE)", "self._counted_weight += block.size"),
]


UNIQUE_TESTS = ["tests/test_unique.py"]
UNIQUE_MUTATIONS = [
    ("a value used twice in a uniqueItems array", "compiler/containers.py",
     "if used >> i & 1:\n                    continue", "if False:\n                    continue"),
    ("a distinct item not met with its schema", "compiler/containers.py",
     "frag, _ = self.callee(both_nodes(schema, make(const=v)), at)", "frag, _ = self.callee(make(const=v), at)"),
    ("values equal as JSON counted as two", "compiler/containers.py",
     "i = next((k for k, u in enumerate(universe) if json_equal(u, v)), None)",
     "i = next((k for k, u in enumerate(universe) if u is v), None)"),
    ("validate lets repeated items through", "compiler/validation.py",
     "if rules.unique and len(instance) > 1:", "if False:"),
    ("a large enum's sets made where reached forget minItems", "compiler/any_order.py",
     "self.stand_in(members, required, extras, lo), slot)", "self.stand_in(members, required, extras, 0), slot)"),
    ("a value listed twice in a large enum taken as two", "compiler/containers.py",
     "values = list(dict(calls[0]).values())", "values = [frag for _, frag in calls[0]]"),
    ("literals of other types read as strings", "compiler/containers.py",
     "return all(isinstance(v, str) for v in values)", "return True"),
]

DYNAMIC_TESTS = ["tests/test_dynamic_ref.py"]
DYNAMIC_MUTATIONS = [
    ("a dynamic anchor bound by the innermost resource in scope", "compiler/dynamic.py",
     "bound.setdefault(name, pointer)", "bound[name] = pointer"),
    ("a $dynamicRef without its bookend still dynamic", "compiler/dynamic.py",
     'if isinstance(schema, dict) and schema.get("$dynamicAnchor") == name:', "if isinstance(schema, dict):"),
    ("a subschema with its own $id not entered", "compiler/dynamic.py",
     "base, scope = below, (entered(scope[0], below), *scope[1:])", "base = below"),
    ("a $ref's target copied without entering its resource", "compiler/dynamic.py",
     "scope = (entered(scope[0], base), *scope[1:])\n        ref = made.get((pointer, scope))",
     "ref = made.get((pointer, scope))"),
    ("a $dynamicRef the validators resolve otherwise taken as the specification reads it", "compiler/dynamic.py",
     "if dict(scope[1]).get(name, pointer) != picked:", "if False:"),
    ("the validators' scope joined at every reference followed", "compiler/dynamic.py",
     "if base and (not pushed or uri_of(base, ref) != base):", "if base:"),
    ("a $ref beside a $dynamicRef dropped", "compiler/dynamic.py",
     "                out[\"allOf\"] = [*out.get(\"allOf\", ()), {\"$ref\": refs[1]}]", "                pass"),
]


PORTABLE_TESTS = ["tests/test_portable.py"]
PORTABLE_MUTATIONS = [
    ("validate reads a not's schema as its own", "compiler/validation.py",
     "other = not loose if self.dialect == \"portable\" else loose  # the other reading", "other = loose"),
    ("a format's other readings left out under not", "compiler/validation.py",
     "return python or loose_matches(fmt, instance)", "return python"),
    ("compile's not format keeps Ajv's reading in", "compiler/scalars.py",
     "ajv = ajv_dfa(f) if portable else None", "ajv = None"),
    ("a most of contains counted in one reading", "compiler/validation.py",
     "more += not (yield (value, rules.contains, path, other))", "more += not (yield (value, rules.contains, path, loose))"),
    ("a key the regex readings differ on escapes additionalProperties", "compiler/containers.py",
     "if subs and not matched:  # some validator matches none of the patterns here", "if False:"),
    ("oneOf's other branches read as the one", "compiler/validation.py",
     "if not (yield (instance, branch, path, other)):", "if not (yield (instance, branch, path, loose)):"),
    ("Python's '.' left out of the either reading", "compiler/regex.py",
     'return ("set", _PYTHON_DOT if self.dialect == "either" else DOT)', 'return ("set", DOT)'),
    ("Python's '$' left out of the either reading", "compiler/regex.py",
     'return _python_ends(node) if self.dialect == "either" else node', "return node"),
    ("not of a bounded format keeps out its long strings", "compiler/scalars.py",
     "    return out + [(at, None)]", "    return out"),
    ("key regions shared between open and closed objects", "compiler/containers.py",
     "allowed[1] if allowed else None, tuple(differ), out_between)", "allowed[1] if allowed else None)"),
    ("a closed object's keys between the readings let in", "compiler/containers.py",
     "out_between = settled and bool(differ) and extra is NEVER", "out_between = False"),
]

ORDER_TESTS = ["tests/test_objects.py"]
ORDER_MUTATIONS = [
    ("any order: a set closes without the required names", "compiler/any_order.py",
     "if count >= family.lo and seen & family.required == family.required:", "if count >= family.lo:"),
    ("any order: a name written twice", "compiler/any_order.py",
     "            if not seen >> i & 1:\n                then(member, seen | 1 << i)",
     "            if True:\n                then(member, seen | 1 << i)"),
    ("any order: a set past maxProperties' room for the required names", "compiler/any_order.py",
     "if family.hi is not None and after + needed > family.hi:", "if False:"),
    ("any order: the stand-in forgets minProperties past the required names", "compiler/any_order.py",
     "more = max(0, lo - required.bit_count())", "more = 0"),
    ("any order: a recursion through the object unseen at compile", "compiler/any_order.py",
     "                self.prog.call(here, member, nowhere)", "                pass"),
    ("a cached grammar handed out past half its automaton's bound", "compiler/grammar.py",
     "if hit is not None and hit.worn():", "if False:"),
    ("a waiting fragment's liveness past depth 1 taken as depth 1's", "automaton/program.py",
     "if d > 1 and not level_seeds and view == seen_as:", "if d > 1:"),
]

ALIVE_TESTS = ["tests/test_alive.py"]
ALIVE_MUTATIONS = [
    ("a meet's oneOf written after properties a side lacks", "compiler/merge.py",
     "return a.one_of_first if _named(a) else _named(b)", "return a.one_of_first"),
    ("member by member: at least one branch taken for exactly one", "compiler/alive.py",
     "return _held(owner, satisfied) == 1", "return _held(owner, satisfied) >= 1"),
    ("member by member: a name passed over keeps the branches requiring it", "compiler/alive.py",
     "kept = alive & ~requires[at]", "kept = alive"),
    ("member by member: names never written required of none (any order)", "compiler/alive.py",
     "if accept(enough & ~missing):", "if accept(enough):"),
    ("member by member: a literal keeps every branch", "compiler/alive.py",
     "inside = tuple(t for t, check in enumerate(checks) if check(value))",
     "inside = tuple(range(len(checks)))"),
    ("member by member: values no schema allows drop the branches taking any", "compiler/alive.py",
     "        if free:  # values none", "        if False:  # values none"),
    ("member by member: maxProperties never drops a branch", "compiler/alive.py",
     "over = [_union(1 << k for k in range(len(leaves)) if most[k] is not None and most[k] < c) for c in range(cap + 1)]",
     "over = [0] * (cap + 1)"),
    ("member by member: two branches that counts tell apart taken as hopeless", "compiler/alive.py",
     "extras = [mask | _union(1 << c for c in range(count) if bounds[c] != bounds[b]) for b, mask in enumerate(extras)]",
     "extras = extras"),
    ("member by member: a branch allowing any value taken as droppable by one", "compiler/alive.py",
     'keys[b] != "none" and keys[c] != "any" and keys[c] != keys[b])) for b in range(count)]',
     'keys[b] != "none" and keys[c] != keys[b])) for b in range(count)]'),
    ("not of a oneOf member by member: none alive taken for not one", "compiler/alive.py",
     "return bool(satisfied & needed) and _held(owner, satisfied) != 1",
     "return bool(satisfied & needed) and _held(owner, satisfied) >= 2"),
    ("not of an anyOf member by member: a branch alive allowed", "compiler/alive.py",
     "return bool(satisfied & needed) and not satisfied & ~needed", "return bool(satisfied & needed)"),
    ("not of object branches: values of other types kept whatever the branches say of them", "compiler/alive.py",
     'kept = whole != 1 if word == "oneOf" else whole == 0', "kept = True"),
    ("not of object branches: a branch allowing some values of other types read as all", "compiler/alive.py",
     'if not any(said(part).keys() == {"types"} and NOT_OBJECTS <= set(part.types) for part in parts):',
     "if False:"),
    ("member by member: a string literal taken by every plain enum", "compiler/alive.py",
     "return lambda value: value in strings if isinstance(value, str) else judge(value)",
     "return lambda value: True if isinstance(value, str) else judge(value)"),
    ("patterns proven apart in one reading only", "compiler/one_of.py",
     "return not chardfa.meets(either_dfa(pattern_a), either_dfa(pattern_b))",
     'return not chardfa.meets(*(__import__("compiler.regex").regex.pattern_dfa(p) for p in (pattern_a, pattern_b)))'),
]

DISTINCT_TESTS = ["tests/test_distinct_strings.py"]
DISTINCT_MUTATIONS = [
    ("a count among free keys lets a key repeat", "compiler/containers.py",
     "self.prog.distinct_strings = True  # a free key written twice would count twice", "pass  #"),
    ("member by member: a free key judged twice lets a key repeat", "compiler/alive.py",
     "self.prog.distinct_strings = True  # a free key written twice would be judged twice", "pass  #"),
    ("the keys' walk reads an escaped quote as the string's end", "automaton/keys.py",
     "                mode = STRING_ESCAPE", "                pass"),
    ("a repeated key walked past the mask goes on", "automaton/matcher.py",
     "if after is keys.REPEATED and token_id in self._repeating(self.index.mask(self.state)):", "if False:"),
    ("a uniqueItems array of strings opens as any other", "compiler/containers.py",
     "            self.prog.unique_opens.add(grid[0][0])", "            pass"),
    ("a union of strings alone read as any value", "compiler/containers.py",
     'return all(self.strings_alone(b, slot.at("anyOf", i), depth + 1) for i, b in enumerate(met.any_of))',
     "return False"),
    ("the strings of a unique array passed over", "automaton/keys.py",
     "mode = IN_KEY if mode == EXPECT_KEY or frames and type(frames[-1]) is tuple else IN_STRING",
     "mode = IN_KEY if mode == EXPECT_KEY else IN_STRING"),
    ("an array's opening judged from where the text began", "automaton/keys.py",
     "at[0] = i\n", "pass\n"),
    ("a string due from a finite set, all written, left in the mask", "automaton/matcher.py",
     "repeating += keys.stranding(self.dfa, self.state, state, mask, self.vocab)", "pass"),
    ("a token opening a kept string left unjudged", "automaton/keys.py",
     "found += [by[spelled[:j]] for by in tails for j in range(len(spelled) + 1) if spelled[:j] in by]",
     "pass"),
    ("a token whose last quote opens a string read by the wrong count of quotes", "automaton/keys.py",
     "tails = [self.by_tail[not inside]]", "tails = [self.by_tail[inside]]"),
    ("an escape spelling more of a written string left in the mask", "automaton/keys.py",
     "found.append(self.backslashed.get(name[len(key)], _NONE))", "pass"),
    ("a token with the bytes of another left out of the stranding candidates", "automaton/keys.py",
     "return [] if t is None else [t, *self.twins.get(t, ())]", "return [] if t is None else [t]"),
    ("a token repeating a string inside the container it opens left unjudged", "automaton/keys.py",
     "self.opening = np.array([t for t in self.two if _opens_and_closes(token_bytes[t])], dtype=np.int64)",
     "self.opening = _NONE"),
    ("more members than distinct keys taken as satisfiable", "compiler/containers.py",
     "if named + sum(k[4].count_up_to(lo) for k in keys) < lo:", "if False:"),
    ("more unique strings than the items allow taken as satisfiable", "compiler/containers.py",
     "if unique_strings and lo >= 2 and self.distinct_strings_below(items, item_slot, lo):", "if False:"),
    ("accepts reads a repeated key's text alone", "compiler/grammar.py",
     "return self.program.distinct_strings and keys.walk(", "return False and keys.walk("),
]


def main() -> int:
    survived, groups = [], [(TESTS, MUTATIONS), (BOOLEAN_TESTS, BOOLEAN_MUTATIONS),
                            (EVALUATION_TESTS, EVALUATION_MUTATIONS), (CHECK_TESTS, CHECK_MUTATIONS),
                            (VALUE_TESTS, VALUE_MUTATIONS), (LAZY_TESTS, LAZY_MUTATIONS),
                            (COUNTED_TESTS, COUNTED_MUTATIONS), (UNIQUE_TESTS, UNIQUE_MUTATIONS),
                            (PATTERN_TESTS, PATTERN_MUTATIONS), (PORTABLE_TESTS, PORTABLE_MUTATIONS),
                            (ALIVE_TESTS, ALIVE_MUTATIONS), (ORDER_TESTS, ORDER_MUTATIONS),
                            (DYNAMIC_TESTS, DYNAMIC_MUTATIONS), (DISTINCT_TESTS, DISTINCT_MUTATIONS)]
    for tests, mutations in groups:
        for name, path, old, new in mutations:
            caught = run(name, path, old, new, tests)
            print(f"{'caught  ' if caught else 'SURVIVED'}  {name}")
            if not caught:
                survived.append(name)
    total = sum(len(mutations) for _, mutations in groups)
    print(f"mutations: {total - len(survived)} caught, {len(survived)} survived")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
