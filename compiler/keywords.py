"""Keyword coverage as data: what we enforce, what we ignore on purpose, and what we refuse.

A keyword of the JSON Schema vocabularies (drafts 4 to 2020-12) that is neither implemented nor an
annotation raises ``UnsupportedKeyword``; a keyword outside those vocabularies (``x-...``,
``propertyOrder``, ``_format``) is ignored, as the specification says of unknown keywords.
"""

# `$dynamicRef` is made a `$ref` when the document is read (``dynamic.py``); `$dynamicAnchor` is then a plain anchor.
IMPLEMENTED = frozenset({
    "type", "enum", "const",
    "properties", "required", "additionalProperties", "patternProperties",
    "minProperties", "maxProperties", "propertyNames",
    "items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains", "minContains", "maxContains",
    "uniqueItems",
    "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
    "unevaluatedProperties", "unevaluatedItems", "$ref", "$dynamicRef", "$dynamicAnchor", "$defs", "definitions", "$id", "id", "$anchor", "$schema", "$vocabulary",
})

# Where subschemas live, by keyword: one schema, a list of schemas, or a name -> schema map (``items``
# is one schema or, before 2020-12, a list; draft 7's ``dependencies`` maps a name to a schema or to names).
ONE_SCHEMA_ORDER = ("additionalProperties", "additionalItems", "not", "if", "then", "else", "contains",
                    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema", "items")
ONE_SCHEMA = frozenset(ONE_SCHEMA_ORDER)
SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
                         "dependencies"})
SCHEMA_HOLDERS = ONE_SCHEMA | SCHEMA_LISTS | SCHEMA_MAPS


def subschemas(key: str, value) -> list[tuple[tuple, dict]]:
    """Each schema object that keyword ``key``'s ``value`` holds, with its path segments below the
    holder (``(key,)``, ``(key, index)`` or ``(key, name)``)."""
    if key in ONE_SCHEMA and isinstance(value, dict):
        return [((key,), value)]
    if key in SCHEMA_LISTS and isinstance(value, list):
        return [((key, i), v) for i, v in enumerate(value) if isinstance(v, dict)]
    if key in SCHEMA_MAPS and isinstance(value, dict):
        return [((key, k), v) for k, v in value.items() if isinstance(v, dict)]
    return []


def with_subschemas(key: str, value, make):
    """Keyword ``key``'s ``value`` with each schema object it holds replaced by ``make(segments,
    schema)`` (``subschemas``' segments), in a new list or map; ``value`` itself where it holds none."""
    if key in ONE_SCHEMA and isinstance(value, dict):
        return make((key,), value)
    if key in SCHEMA_LISTS and isinstance(value, list):
        return [make((key, i), v) if isinstance(v, dict) else v for i, v in enumerate(value)]
    if key in SCHEMA_MAPS and isinstance(value, dict):
        return {k: make((key, k), v) if isinstance(v, dict) else v for k, v in value.items()}
    return value

ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "readOnly",
    "writeOnly", "deprecated", "contentMediaType", "contentEncoding", "contentSchema",
})

VOCABULARY = frozenset({
    # core
    "$schema", "$id", "id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
    "$recursiveAnchor", "$vocabulary", "$comment", "$defs", "definitions",
    # applicators
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
    "prefixItems", "items", "additionalItems", "contains", "properties", "patternProperties",
    "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    # validation
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired",
    # format, content, meta-data
    "format", "contentEncoding", "contentMediaType", "contentSchema",
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
})

UNSUPPORTED = VOCABULARY - IMPLEMENTED - ANNOTATIONS


TYPES = ("null", "boolean", "object", "array", "string", "number", "integer")

