"""A llama-cpp-python logits processor: ``LogitsProcessorList([JSONLogitsProcessor(schema, llm)])``.

llama-cpp-python hands the processor every token so far (prompt included) and the scores of the
next position, one sequence at a time; a new prompt is recognised when the tokens no longer
extend the last one seen.
"""

from __future__ import annotations

import numpy as np

from automaton.vocab import Vocabulary

from .rows import RowTracker
from .schema_input import as_grammar


class JSONLogitsProcessor:
    def __init__(self, schema_or_grammar, llm, *, vocab: Vocabulary | None = None, **compile_options):
        self.grammar = as_grammar(schema_or_grammar, compile_options)
        self.vocab = vocab or Vocabulary.from_llama(llm)
        self.tracker = RowTracker(self.grammar, self.vocab)
        self._prompt: np.ndarray | None = None

    def reset(self) -> None:
        self._prompt = None
        self.tracker.reset()

    def __call__(self, input_ids, scores):
        ids = np.asarray(input_ids)
        p = self._prompt
        if p is None or len(ids) < len(p) or not np.array_equal(ids[: len(p)], p):
            self.reset()
            self._prompt = p = ids.copy()
        row = self.tracker.rows([tuple(ids[len(p):].tolist())])[0]
        mask = self.tracker.mask(row)
        n = min(len(scores), len(mask))
        out = np.full_like(scores, -np.inf)
        keep = np.flatnonzero(mask[:n])
        out[keep] = scores[keep]
        return out
