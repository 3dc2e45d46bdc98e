"""Schemas and prompts the real-generation tests share (llama-cpp-python, transformers, vLLM)."""

import json

import jsonschema

import constrain

ITINERARY = {
    "type": "object",
    "properties": {
        "destination": {"enum": ["Lençóis Maranhenses", "Jericoacoara", "Fernando de Noronha"]},
        "nights": {"type": "integer", "minimum": 1, "maximum": 14},
    },
    "required": ["destination", "nights"],
    "additionalProperties": False,
}
THREE_STRINGS = {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 3, "maxItems": 3}
DUNES = "Plan a trip to the white dunes and blue lagoons of Lençóis Maranhenses in Brazil. Answer in JSON."


def assert_valid(text, schema):
    """Walked again through a fresh grammar and validated by python-jsonschema."""
    assert constrain.compile(schema).accepts(text), text
    jsonschema.validate(json.loads(text), schema)
