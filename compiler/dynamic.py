"""``$dynamicRef`` made static: the document rewritten so that each one is a plain ``$ref``.

A ``$dynamicRef`` to a ``$dynamicAnchor`` means the same-named dynamic anchor of the outermost
schema resource in the *dynamic scope*, the resources evaluation passed through to get there (by
``$ref`` or into a subschema with its own ``$id``). What it picks depends only on which resource
first bound each anchor name on the way, a *binding* (name -> anchor) that grows as resources are
entered and never changes a name once bound. So every schema the root reaches is copied once per
binding it is reached under, and a ``$dynamicRef`` in a copy becomes a ``$ref`` to the copy of what
its binding picks: the scope is then in the references, and compiling, validating and describing
read a document without dynamic references (the dynamic anchors themselves are plain ones,
``refs.py``). A recursive schema reaches itself under the same binding, so the copies are finite;
``MAX_COPIES`` bounds a hostile document.

python-jsonschema and jsonschema-rs keep a narrower scope: a resource joins it only once a
reference is followed from inside it, the first one followed at all or one to another URI (the
root and a subschema with its own ``$id`` do not, by being evaluated). Their binding is tracked
beside the specification's (a *scope* holds both, and whether theirs was joined yet), and
a ``$dynamicRef`` the two readings resolve differently is refused: a resource entered without a
reference binding the name first (an extension embedded, not referenced), which the test suite
does not test.

The copies live in the root's ``$defs`` (or ``definitions``), without ``$id`` or anchors: every
reference in them is to another copy, by pointer. A copy of ``/$defs/tree`` is ``/$defs/tree``
again (``tree (2)`` for a second binding), so a message about it names the place the user wrote;
a copy of a schema elsewhere is named by its whole pointer.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

from .errors import SchemaError, SchemaTooComplex, UnsupportedKeyword
from .keywords import with_subschemas
from .refs import child, pointer_of, unescape, uri_of

MAX_COPIES = 100_000  # schema objects copied for their bindings
_NAMING = ("$id", "id", "$anchor", "$dynamicAnchor", "$defs", "definitions")  # what a copy leaves out
_REFS = ("$ref", "$dynamicRef")


def unfold(doc) -> dict:
    """``doc``'s root with every ``$dynamicRef`` resolved as its dynamic scope has it (``doc`` is
    indexed: its ``$ref``s absolute where a subschema sets a base URI, its dynamic anchors known)."""
    root = doc.root
    if not isinstance(root, dict):
        return root
    copies: dict[str, dict] = {}  # "$defs" or "definitions" -> name -> the copy
    made: dict[tuple, str] = {}  # (pointer copied, scope) -> reference to the copy
    taken: dict[tuple, int] = {}  # (container, name) -> copies so named
    todo: list[tuple] = []  # (schema, its copy to fill, base URI, scope, linked path)

    def entered(binding: tuple, base: str) -> tuple:
        """``binding`` with the dynamic anchors of resource ``base`` it does not bind yet."""
        anchors = doc.dynamic_anchors.get(base)
        if not anchors:
            return binding
        bound = dict(binding)
        for name, pointer in anchors.items():
            bound.setdefault(name, pointer)
        return tuple(sorted(bound.items()))

    def followed(scope: tuple, base: str, ref: str) -> tuple:
        """``scope`` as a reference ``ref`` followed from base ``base`` leaves the validators'
        binding (``referencing``'s resolver): the resource it leaves joins theirs where it is the
        first one followed from or ``ref`` leads elsewhere, and names a URI (the specification's
        binding joins the resource where it lands, ``copy_of``)."""
        spec, theirs, pushed = scope
        if base and (not pushed or uri_of(base, ref) != base):
            return spec, entered(theirs, base), True
        return scope

    def copy_of(pointer: str, schema, scope: tuple) -> str:
        """A reference to ``schema`` (at ``pointer``) copied for ``scope``, the resource it is in entered."""
        base = doc.base_uri(pointer)
        scope = (entered(scope[0], base), *scope[1:])
        ref = made.get((pointer, scope))
        if ref is None:
            parts = pointer.split("/")
            container, name = (parts[1], unescape(parts[2])) if len(parts) == 3 and parts[1] in ("$defs", "definitions") \
                else ("$defs", pointer or "#")
            n = taken[container, name] = taken.get((container, name), 0) + 1
            name += f" ({n})" if n > 1 else ""
            ref = made[pointer, scope] = "#" + quote(child("/" + container, name), safe="/~$")
            held = copies.setdefault(container, {})
            if isinstance(schema, dict):
                held[name] = {}
                todo.append((schema, held[name], base, scope, (None, pointer)))  # errors name the original
            else:
                held[name] = schema
        return ref

    def target(word: str, ref, base: str, path, scope: tuple) -> str:
        try:  # the base known: no pointer spelled out (a chain of references 10,000 deep stays linear)
            pointer, schema = doc.resolve(ref, "", word=word, base=base)
        except SchemaError:
            doc.resolve(ref, pointer_of(path), word=word)  # raises it again, worded at its place
            raise
        scope = followed(scope, base, ref)
        fragment = ref.partition("#")[2]
        if word == "$dynamicRef" and fragment and not fragment.startswith("/"):
            name = unquote(fragment)
            # only a reference to a dynamic anchor of that name is dynamic (the "bookend")
            if isinstance(schema, dict) and schema.get("$dynamicAnchor") == name:
                picked = dict(entered(scope[0], doc.base_uri(pointer))).get(name, pointer)
                if dict(scope[1]).get(name, pointer) != picked:
                    raise UnsupportedKeyword(pointer_of(path), "$dynamicRef", f"{ref!r} resolves otherwise in "
                                             "python-jsonschema and jsonschema-rs, which count a resource in the dynamic "
                                             "scope only once a $ref is followed from it", ())
                if picked != pointer:
                    pointer, schema = doc.resolve("#" + quote(picked, safe="/~"), "")
        return copy_of(pointer, schema, scope)

    new_root = {key: root[key] for key in ("$schema", "$id", "id") if key in root}
    base = doc.base_uri("")
    todo.append((root, new_root, base, (entered((), base), (), False), None))
    copied = 0
    while todo:
        schema, out, base, scope, path = todo.pop()
        copied += 1
        if copied > MAX_COPIES:
            raise SchemaTooComplex(pointer_of(path), f"$dynamicRef scopes needing over {MAX_COPIES} schema copies")
        below = doc.id_base(base, schema)
        if below != base:  # a resource of its own: entered (by the specification's reading)
            base, scope = below, (entered(scope[0], below), *scope[1:])
        def to_fill(at: tuple, sub: dict, base=base, scope=scope, path=path) -> dict:
            copy: dict = {}
            todo.append((sub, copy, base, scope, (path, at)))
            return copy

        refs = []
        for key, value in schema.items():
            if key in _NAMING:
                continue
            if key in _REFS:
                refs.append(target(key, value, base, path, scope))
            else:  # each subschema a copy to fill in turn
                out[key] = with_subschemas(key, value, to_fill)
        if refs:  # a `$ref` and a `$dynamicRef` side by side both apply
            out["$ref"] = refs[0]
            if len(refs) > 1:
                out["allOf"] = [*out.get("allOf", ()), {"$ref": refs[1]}]
    new_root.update(copies)
    return new_root

