"""The generated tests' oracle: python-jsonschema's validator for the draft a schema names."""

import json

import jsonschema

import constrain


def agrees_on(schema, values) -> str:
    """Compile ``schema`` and check, on each of ``values``, that the grammar and ``constrain.validate``
    both say what the draft's validator says; "compiled", "unsatisfiable" (then no value is valid)
    or "refused" (a clear refusal, never a wider language)."""
    oracle = jsonschema.validators.validator_for(schema)(schema)
    try:
        grammar = constrain.compile(schema, whitespace="compact", property_order="any", cache=False)
    except constrain.Unsatisfiable:
        assert not any(oracle.is_valid(v) for v in values), schema
        return "unsatisfiable"
    except (constrain.UnsupportedKeyword, constrain.SchemaTooComplex):
        return "refused"
    for value in values:
        expected = oracle.is_valid(value)
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == expected, (schema, value)
        assert (constrain.validate(value, schema) == []) == expected, (schema, value)
    return "compiled"
