"""``constrain.validate``: the validator lives in ``compiler.validation`` (the compiler uses it to
filter ``enum`` values against their sibling keywords, and imports only point down)."""

from compiler.validation import MAX_DEPTH, Validator, json_equal, validate

__all__ = ["validate", "Validator", "json_equal", "MAX_DEPTH"]
