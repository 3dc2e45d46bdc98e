"""A llama-cpp-python logits processor: ``LogitsProcessorList([JSONLogitsProcessor(schema, llm)])``.

llama-cpp-python hands the processor every token so far (prompt included) and the scores of the
next position, one sequence at a time, one new token per call while it generates; anything else
(fewer tokens, other tokens, several new ones: the next turn of a chat) is a new prompt. The
sequence itself is a ``Matcher`` (the wedge guard and EOS rule);
a warm step adds the state's ready 0/-inf vector to the scores in place.
"""

from __future__ import annotations

import numpy as np

from automaton.matcher import Matcher
from automaton.vocab import Vocabulary

from .bias import NUMPY
from .schema_input import as_grammar


class JSONLogitsProcessor:
    def __init__(self, schema_or_grammar, llm, *, vocab: Vocabulary | None = None, **compile_options):
        self.grammar = as_grammar(schema_or_grammar, compile_options)
        self.vocab = vocab or Vocabulary.from_llama(llm)
        self.matcher = Matcher(self.grammar, self.vocab)
        self._seen = np.zeros(0, dtype=np.int64)  # the tokens of the last call, prompt included
        self._prompt_len = 0

    def reset(self) -> None:
        """Forget the current generation (done automatically when a new prompt arrives)."""
        self._seen = np.zeros(0, dtype=np.int64)
        self.matcher.reset()

    def __call__(self, input_ids, scores):
        ids = np.asarray(input_ids)
        seen = self._seen
        n = len(seen)
        if n and len(ids) == n + 1 and np.array_equal(ids[:n], seen):
            self.matcher.advance(int(ids[n]))
        else:  # a new prompt (or a rewound one): its generation starts here
            self.matcher.reset()
            self._prompt_len = len(ids)
        self._seen = ids.copy()
        bias = NUMPY.get(self.matcher, scores.shape[-1], scores.dtype)
        if scores.flags.writeable:
            scores += bias
            return scores
        return scores + bias

    @property
    def generated(self) -> list[int]:
        """The tokens generated since the prompt (for tests and logs)."""
        return self._seen[self._prompt_len:].tolist()
