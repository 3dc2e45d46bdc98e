"""`$ref` resolution inside one schema document: JSON pointers, `$defs`, `$id` base URIs and anchors.

The document is indexed once, iteratively (a schema nested ten thousand levels deep must not hit the
recursion limit), and pointers are only spelled out for the few nodes that carry an `$id` or an
anchor: building a pointer string for every node would cost time and memory quadratic in the depth.

The document is also read as its draft reads it, once (``SchemaDocument._as_read``): a draft 3 to 7
``$ref`` loses its siblings and another draft's words are left out, so nothing downstream reads a
draft's rules again, and a copy the compiler writes of a schema keeps its reading. Pointers still
lead through the document as written.

A reference that leaves the document (another file, a metaschema URL) is refused as unsupported:
we never fetch anything. A reference that should be inside the document but is not there is an
invalid schema.
"""

from __future__ import annotations

from urllib.parse import unquote, urljoin, urlsplit

from compiler.errors import InvalidSchema, UnsupportedKeyword
from compiler.keywords import ONE_SCHEMA, SCHEMA_HOLDERS, SCHEMA_LISTS, SCHEMA_MAPS, subschemas, with_subschemas

_NAMING = frozenset({"$id", "id", "$anchor", "$dynamicAnchor"})  # what may name a schema (``_index``)
_MODERN = ("2019-09", "2020-12")
_LEGACY = ("draft-03", "draft-04", "draft-06", "draft-07")  # where `$ref` overrides its siblings
_NOT_IN_7 = frozenset({"dependentRequired", "dependentSchemas", "minContains", "maxContains",
                       "unevaluatedProperties", "unevaluatedItems"})
_NOT_IN_4 = _NOT_IN_7 | {"if", "then", "else", "contains", "propertyNames", "const", "prefixItems"}
_LATER_WORDS = {  # what a draft does not have (2019-09 split `dependencies` in two; 2020-12 added prefixItems)
    "draft-03": _NOT_IN_4,
    "draft-04": _NOT_IN_4,
    "draft-06": _NOT_IN_7 | {"if", "then", "else", "prefixItems"},
    "draft-07": _NOT_IN_7 | {"prefixItems"},
    "2019-09": frozenset({"dependencies", "prefixItems"}),
}


def escape(segment) -> str:
    """Escape one JSON-pointer segment (``~`` → ``~0``, ``/`` → ``~1``)."""
    return str(segment).replace("~", "~0").replace("/", "~1")


def unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def child(pointer: str, *segments) -> str:
    """Join JSON-pointer segments onto `pointer` (the root is ``""``), escaping ``~`` and ``/``."""
    return pointer + "".join("/" + escape(s) for s in segments)


def split_pointer(pointer: str) -> list[str]:
    """The unescaped segments of a JSON pointer (``""`` → ``[]``)."""
    pointer = pointer.lstrip("#")
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [unescape(s) for s in pointer[1:].split("/")]


def _join(base: str, ref: str) -> str:
    """Resolve `ref` against `base`; urljoin drops the base for non-hierarchical schemes (urn:)."""
    if ref.startswith("#"):
        return base.split("#", 1)[0] + ref
    if urlsplit(ref).scheme or not base:
        return ref
    return urljoin(base, ref)


def uri_of(base: str, ref: str) -> str:
    """The URI, without its fragment, that ``ref`` found under base URI ``base`` names."""
    return _defrag(_join(base, ref))[0]


def _defrag(uri: str) -> tuple[str, str]:
    uri, _, fragment = uri.partition("#")
    return uri, fragment


def pointer_of(path) -> str:
    """Spell out a linked path as a JSON pointer.

    A linked path is ``None`` (the root) or ``(parent_path, suffix)`` with `suffix` an escaped
    pointer fragment such as ``"/properties/a~1b"``, or a tuple of its segments unescaped: cheap to
    extend, spelled out only on demand.
    """
    parts = []
    while path is not None:
        path, suffix = path
        parts.append(suffix if isinstance(suffix, str) else child("", *suffix))
    return "".join(reversed(parts))


def _draft_named(schema_uri) -> str | None:
    return next((d for d in (*_LEGACY, *_MODERN) if isinstance(schema_uri, str) and d in schema_uri), None)


def id_word_and_ref_rule(schema_uri) -> tuple[str, bool]:
    """The word a draft names a resource with (drafts 3 and 4 spell `$id` as `id`) and whether a
    `$ref` hides its siblings there (drafts 3 to 7): what a bundle writes (``load.bundle``)."""
    named = _draft_named(schema_uri)
    return ("id" if named in ("draft-03", "draft-04") else "$id"), named in _LEGACY


class SchemaDocument:
    """One loaded schema document: indexes `$id` / `$anchor` / `id` (draft 4-7) for in-document resolution."""

    def __init__(self, root):
        if not isinstance(root, (dict, bool)):
            raise InvalidSchema("", f"a schema must be an object or a boolean, not {type(root).__name__}")
        self._load(root)
        if self._dynamic_refs:  # each `$dynamicRef` made a `$ref` (``dynamic.py``), read again
            from compiler.dynamic import unfold

            self._load(unfold(self))

    def _load(self, root) -> None:
        self.root = root
        schema_uri = root.get("$schema", "") if isinstance(root, dict) else ""
        # Drafts 3 and 4 spell `$id` as `id`, and the other word is an unknown one there as `id` is
        # from draft 6 on (so their validators read it); a document naming no draft reads both.
        # Drafts 3 to 7 ignore every keyword beside a `$ref` (so do their validators, which labelled
        # MaskBench); a document that does not name one of them gets 2020-12's rule: both apply.
        named = _draft_named(schema_uri)
        id_word, self.ref_alone = id_word_and_ref_rule(schema_uri)
        self._id_words = (id_word,) if named else ("$id", "id")
        # keywords another draft has and this one does not: unknown words here, so ignored. A
        # document naming no draft keeps every keyword: ignoring draft 7's `dependencies` there would
        # widen the language its author meant.
        self.ignored = _LATER_WORDS.get(named, frozenset({"dependencies"} if named else ()))
        # 2019-09's unevaluatedItems does not count the items `contains` matched; 2020-12's does
        self.contains_evaluates = not (isinstance(schema_uri, str) and "2019-09" in schema_uri)
        self._resources: dict[str, str] = {}          # absolute URI (no fragment) -> pointer
        self._anchors: dict[tuple[str, str], str] = {}  # (resource URI, anchor name) -> pointer
        self.dynamic_anchors: dict[str, dict[str, str]] = {}  # resource URI -> its `$dynamicAnchor`s -> pointer
        self._dynamic_refs = False  # whether a schema object holds a `$dynamicRef` (``_index``)
        self._ambiguous: set[str] = set()             # URIs or anchors declared twice
        self._base_cache: dict[str, str] = {}
        self._unread = False  # whether a schema object holds words its draft does not read (``_index``)
        self._indexed: set[int] = set()  # ids of the schema objects ``_index`` walked (the schema keywords' tree)
        self._index()
        # whether a subschema below the root sets a base URI (then a `$ref` means different things
        # in different places)
        self.has_ids = any(pointer for pointer in self._resources.values())
        if self.has_ids:
            # the lowering moves subschemas about (merged, inlined): a `$ref` written relative to the
            # base URI where it stands is made absolute, so it means the same wherever it goes
            self.root = self._absolute_refs(root)
            self._resources.clear(), self._anchors.clear(), self._ambiguous.clear(), self._indexed.clear()
            self.dynamic_anchors.clear()
            self._index()
        # the document as written, where pointers lead (``$defs`` beside a draft 7 ``$ref`` are
        # reached by pointer), and each of its schema objects' copy as the draft reads it
        self._written = self.root
        self._read: dict[int, dict] = {}
        if self._unread:
            self.root = self._as_read(self._written)

    # -- indexing --------------------------------------------------------------------------

    def _own_id(self, node: dict):
        if self.ref_alone and "$ref" in node:  # drafts 3 to 7: a `$ref` hides its siblings, `$id` too
            return None, None
        for word in self._id_words:
            if isinstance(node.get(word), str) or (word == "$id" and word in node):
                return node[word], word
        return None, None

    def _as_read(self, top: dict) -> dict:
        """A copy of every schema object from ``top`` down as the draft reads it: a draft 3 to 7
        ``$ref`` without its siblings, another draft's words left out. Read once, so nothing after
        (the build, the lowering, a copy the compiler writes of a branch) reads a draft's rules
        again. Returns ``top``'s copy; ``_read`` maps each object's id to its copy. The document's
        root is read at load (where it needs it); a ``$ref`` target outside the schema keywords'
        tree (``x-defs``, ``components``) when it is resolved."""
        read, written = self._read, []
        stack = [top]
        while stack:  # every schema object, those under words left out too (a pointer may lead there)
            node = stack.pop()
            if not isinstance(node, dict) or id(node) in read:
                continue
            read[id(node)] = {}
            written.append(node)
            for key, value in node.items():
                if key in SCHEMA_HOLDERS:
                    stack += [child for _, child in subschemas(key, value)]
        for node in written:
            copy = read[id(node)]
            for key, value in ({"$ref": node["$ref"]} if self.ref_alone and "$ref" in node else node).items():
                if key not in self.ignored:
                    copy[key] = with_subschemas(key, value, lambda _, v: read[id(v)])
        return read[id(top)]

    def _index(self) -> None:
        """Walk every schema object (depth first), declaring resources and anchors; a schema object
        that holds itself (a Python object can; no JSON text can) is refused, naming where it comes
        back: every walk of the document would go round it for ever."""
        self._resources[""] = ""
        stack = [(self.root, "", None)]
        on_path: set[int] = set()  # the schema objects from the root down to the one walked
        while stack:
            node, base, path = stack.pop()
            if node is None:  # leaving ``base`` (an id): its subschemas are walked
                on_path.discard(base)
                continue
            if not isinstance(node, dict):
                continue
            if id(node) in on_path:
                raise InvalidSchema(pointer_of(path), "the schema holds itself (a Python object no JSON text can write)")
            on_path.add(id(node))
            stack.append((None, id(node), None))
            self._indexed.add(id(node))
            if not self.ignored.isdisjoint(node) or (self.ref_alone and "$ref" in node and len(node) > 1):
                self._unread = True
            if not _NAMING.isdisjoint(node):
                base = self._named(node, base, path)
            if "$dynamicRef" in node:
                self._dynamic_refs = True
            for key, value in node.items():  # every subschema directly under it
                if key in SCHEMA_HOLDERS:
                    stack += [(child, base, (path, at)) for at, child in subschemas(key, value)]

    def _named(self, node: dict, base: str, path) -> str:
        """Declare ``node``'s own resource and anchors; return the base URI below it."""
        ident, keyword = self._own_id(node)
        if ident is not None:
            if not isinstance(ident, str):
                raise InvalidSchema(pointer_of(path), f"{keyword} must be a string")
            uri, fragment = _defrag(_join(base, ident))
            pointer = pointer_of(path)
            if uri and uri != base:
                self._declare(self._resources, uri, pointer)
                base = uri
                self._same_draft(node, path)
            if fragment and not fragment.startswith("/"):
                # draft 6/7 plain-name fragment in $id (`"$id": "#foo"`): an anchor, not a new base
                self._declare(self._anchors, (base, unquote(fragment)), pointer)
        for keyword in ("$anchor", "$dynamicAnchor"):  # a `$ref` reaches a dynamic anchor as a plain one
            anchor = node.get(keyword)
            if isinstance(anchor, str):
                self._declare(self._anchors, (base, anchor), pointer_of(path))
                if keyword == "$dynamicAnchor":
                    self.dynamic_anchors.setdefault(base, {}).setdefault(anchor, pointer_of(path))
        return base

    def _same_draft(self, resource: dict, path) -> None:
        """An embedded resource naming another draft than the document's reads its keywords its own
        way (a 2020-12 resource in a draft 7 document keeps its ``$ref``'s siblings): refused, as a
        resource handed over of another draft is. One the document names no draft for keeps every
        keyword, the narrowest reading, so only a document naming its draft refuses."""
        own, draft = resource.get("$schema"), self.root.get("$schema")
        if path is not None and isinstance(own, str) and isinstance(draft, str) and own.rstrip("#") != draft.rstrip("#"):
            raise UnsupportedKeyword(child(pointer_of(path), "$schema"), "$schema",
                                     f"an embedded resource of another draft ({own}) than the document's ({draft})")

    def _absolute_refs(self, root: dict) -> dict:
        """A copy of the document's schema objects with every ``$ref`` joined to its base URI."""
        root = dict(root)
        stack = [(root, "")]
        while stack:
            node, base = stack.pop()
            ident, _ = self._own_id(node)
            if isinstance(ident, str):
                base = _defrag(_join(base, ident))[0] or base
            for word in ("$ref", "$dynamicRef"):
                if isinstance(node.get(word), str) and base:
                    node[word] = _join(base, node[word])
            def copied(_, schema: dict, base=base) -> dict:
                copy = dict(schema)
                stack.append((copy, base))
                return copy

            for key, value in node.items():
                if key in SCHEMA_HOLDERS:
                    node[key] = with_subschemas(key, value, copied)
        return root

    def _declare(self, table: dict, key, pointer: str) -> None:
        if key in table and table[key] != pointer:
            self._ambiguous.add(key)
        else:
            table[key] = pointer

    # -- base URI at a location -------------------------------------------------------------

    def base_uri(self, pointer: str) -> str:
        """The base URI in effect at the schema located by `pointer` (its own `$id` included)."""
        cached = self._base_cache.get(pointer)
        if cached is not None:
            return cached
        node, base, kind = self._written, self.id_base("", self._written), "schema"
        for seg in split_pointer(pointer):
            if isinstance(node, dict) and seg in node:
                node = node[seg]
            elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
                node = node[int(seg)]
            else:
                break
            if kind == "schema":
                kind = ("list" if seg in SCHEMA_LISTS and isinstance(node, list) else
                        "map" if seg in SCHEMA_MAPS and isinstance(node, dict) else
                        "schema" if seg in ONE_SCHEMA and isinstance(node, (dict, bool)) else "other")
            elif kind in ("list", "map"):
                kind = "schema"
            if kind == "schema":
                base = self.id_base(base, node)
        if len(self._base_cache) < 4096:
            self._base_cache[pointer] = base
        return base

    def id_base(self, base: str, node) -> str:
        """The base URI below ``node`` where the one above it is ``base`` (its own ``$id`` joined)."""
        ident, _ = self._own_id(node) if isinstance(node, dict) else (None, None)
        if isinstance(ident, str):
            return _defrag(_join(base, ident))[0] or base
        return base

    # -- resolution ----------------------------------------------------------------------------

    def resolve(self, ref: str, pointer: str, via: tuple[str, ...] = (), word: str = "$ref",
                base: str | None = None) -> tuple[str, object]:
        """Resolve `ref` found at JSON pointer `pointer` (the location of the schema holding the $ref);
        return ``(target_pointer, target_subschema)``. `via` (the refs that led to `pointer`) is only
        passed on to the errors, which name the keyword as ``word``; ``base``: the base URI there,
        where the caller knows it (else read off ``pointer``)."""
        if not isinstance(ref, str):
            raise InvalidSchema(pointer, f"{word} must be a string, not {type(ref).__name__}", via)
        uri, fragment = _defrag(_join(self.base_uri(pointer) if base is None else base, ref))
        if self.has_ids and uri not in self._resources and not ref.startswith("#") and _defrag(ref)[0] in self._resources:
            # made absolute where it is written, at load (``_absolute_refs``): under a relative base
            # URI (an `$id` of "sub/a" in a document with none) it stays relative, and joined again
            # its path doubles ("sub/sub/a")
            uri, fragment = _defrag(ref)
        if uri in self._ambiguous:
            raise InvalidSchema(pointer, f"unresolvable {word} {ref!r} ({uri!r} is declared twice)", via)
        resource = self._resources.get(uri)
        if resource is None:
            raise UnsupportedKeyword(pointer, word, f"remote reference {ref!r}", via)
        if fragment == "" or fragment.startswith("/"):
            target = self._follow(resource, unquote(fragment))
            if target is None and resource != "":
                # Sloppy documents give sub-schemas an `$id` yet mean `#/definitions/..` of the root.
                target = self._follow("", unquote(fragment))
            if target is None:
                raise InvalidSchema(pointer, f"unresolvable {word} {ref!r}", via)
        else:
            key = (uri, unquote(fragment))
            if key in self._ambiguous:
                raise InvalidSchema(pointer, f"unresolvable {word} {ref!r} (anchor declared twice)", via)
            if key not in self._anchors:
                raise InvalidSchema(pointer, f"unresolvable {word} {ref!r}", via)
            target_pointer = self._anchors[key]
            target = (target_pointer, self._node_at(target_pointer))
        target_pointer, node = target
        if not isinstance(node, (dict, bool)):
            raise InvalidSchema(pointer, f"unresolvable $ref {ref!r} (it points to "
                                         f"{type(node).__name__}, not a schema)", via)
        if isinstance(node, dict) and id(node) not in self._indexed and id(node) not in self._read:
            self._as_read(node)  # outside the schema keywords' tree: read as the draft reads it, now
        return target_pointer, self._read.get(id(node), node)

    def _node_at(self, pointer: str):
        return self._follow("", pointer)[1]

    def _follow(self, start: str, fragment: str):
        """Walk JSON pointer `fragment` from the node at pointer `start`; None when it leads nowhere."""
        node = self._written
        try:
            segments = split_pointer(start) + split_pointer(fragment)
        except ValueError:
            return None
        for seg in segments:
            if isinstance(node, dict) and seg in node:
                node = node[seg]
            elif isinstance(node, list) and seg.isdigit() and (seg == "0" or seg[0] != "0") \
                    and int(seg) < len(node):
                node = node[int(seg)]
            else:
                return None
        return start + "".join("/" + escape(s) for s in split_pointer(fragment)), node
