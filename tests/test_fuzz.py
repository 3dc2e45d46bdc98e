"""Adversarial fuzz: seeded random logits drive generation through the Matcher.

Whatever the logits, every step offers at least one token, and every finished output is a
document python-jsonschema accepts. Schemas are hand-written ones and MaskBench dev schemas
(when ``MASKBENCH_DIR`` names the data), over every test vocabulary.
"""

import json
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import constrain
from automaton.matcher import Matcher

HAND_WRITTEN = [
    {"type": "object", "properties": {"city": {"enum": ["Lençóis Maranhenses", "São Paulo", "東京"]},
                                      "days": {"type": "integer", "minimum": 1, "maximum": 9},
                                      "note": {"type": "string", "maxLength": 8}},
     "required": ["city", "days"], "additionalProperties": False},
    {"type": "array", "items": {"type": "number", "minimum": 0, "exclusiveMaximum": 10}, "maxItems": 4},
    {"anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"}]},
    {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "boolean"},
                                                         "kids": {"type": "array", "items": {"$ref": "#/$defs/node"},
                                                                  "maxItems": 2}},
                        "required": ["v"], "additionalProperties": False}}, "$ref": "#/$defs/node"},
    {"type": "string", "format": "date"},
]


def maskbench_schemas(limit=6):
    root = os.environ.get("MASKBENCH_DIR")
    if not root:
        return []
    names = Path(root, "dev-sample.txt").read_text().split()[:60]
    out = []
    for name in names:
        schema = json.loads(Path(root, "dev", name).read_text())["schema"]
        try:
            constrain.compile(schema, max_seconds=5)
        except (constrain.SchemaError, ValueError):
            continue
        out.append(schema)
        if len(out) == limit:
            break
    return out


def generate(grammar, vocab, rng, max_tokens=80):
    """Sample from random logits under the mask, preferring EOS a little once it is allowed."""
    m = Matcher(grammar, vocab)
    out = b""
    for _ in range(max_tokens):
        mask = m.mask()
        allowed = np.flatnonzero(mask)
        assert len(allowed), f"empty mask after {out!r}"
        logits = rng.standard_normal(len(allowed))
        eos = np.isin(allowed, sorted(vocab.eos_ids))
        logits[eos] += 2.0
        tid = int(allowed[np.argmax(logits)])
        assert m.advance(tid)
        if tid in vocab.eos_ids:
            return out, True
        out += vocab.token_bytes[tid]
    return out, False


@pytest.mark.parametrize("seed", range(3))
def test_random_logits_always_give_valid_documents(vocabulary, seed):
    """No empty mask ever; every finished output validates."""
    rng = np.random.default_rng(seed)
    for schema in HAND_WRITTEN + maskbench_schemas():
        grammar = constrain.compile(schema, whitespace="bounded")
        text, finished = generate(grammar, vocabulary, rng)
        if finished:
            jsonschema.validate(json.loads(text), schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            assert grammar.accepts(text)
        else:
            assert grammar.accepts_prefix(text)


def test_masks_are_shared_across_threads(vocabulary_by_name):
    """Many threads asking for masks of one grammar get the same answers as one thread."""
    vocab = vocabulary_by_name("llama-bpe")
    schema = HAND_WRITTEN[0]
    serial = [generate(constrain.compile(schema), vocab, np.random.default_rng(s))[0] for s in range(8)]
    fresh = constrain.compile(schema, cache=False)  # a cold grammar, shared by the threads

    def run(s):
        return generate(fresh, vocab, np.random.default_rng(s))[0]

    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(run, range(8)))
    assert parallel == serial


def test_same_schema_reuses_the_compiled_grammar():
    """Compiling the same schema with the same options twice gives the same grammar object."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert constrain.compile(schema) is constrain.compile(json.loads(json.dumps(schema)))
    assert constrain.compile(schema) is not constrain.compile(schema, whitespace="compact")


def test_grammar_and_vocabulary_pickle(vocabulary_by_name):
    """A Grammar and a Vocabulary survive pickling (for worker processes) and behave the same."""
    vocab = vocabulary_by_name("llama-bpe")
    grammar = constrain.compile(HAND_WRITTEN[0])
    g2, v2 = pickle.loads(pickle.dumps(grammar)), pickle.loads(pickle.dumps(vocab))
    assert v2 == vocab
    text = '{"city": "S\\u00e3o Paulo", "days": 3}'
    assert g2.accepts(text) == grammar.accepts(text) is True
    a, b = Matcher(grammar, vocab), Matcher(g2, v2)
    assert np.array_equal(a.mask(), b.mask())
