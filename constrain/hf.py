"""A ``transformers`` logits processor: ``model.generate(..., logits_processor=[JSONLogitsProcessor(schema, tokenizer)])``.

Each batch row is a ``Matcher`` (the wedge guard and EOS rule). A step checks in one comparison
that the rows extend last step's rows in place (sampling, greedy) and walks each row's new token;
when they do not (beam search reorders, duplicates and drops rows), each row finds the row it
extends among last step's, and a new prompt starts over. The masks are ready 0/-inf tensors per
state on the scores' device, added to the scores: a warm step costs one addition.
"""

from __future__ import annotations

from automaton.matcher import Matcher
from automaton.vocab import Vocabulary

from .bias import TORCH
from .schema_input import as_grammar


class JSONLogitsProcessor:
    def __init__(self, schema_or_grammar, tokenizer, *, model=None, vocab: Vocabulary | None = None, **compile_options):
        import torch  # noqa: F401  (fail here, clearly, if torch is missing)

        self.grammar = as_grammar(schema_or_grammar, compile_options)
        self.vocab = vocab or Vocabulary.from_transformers(tokenizer, model=model, eos_ids=_stop_ids(tokenizer, model))
        self._fresh = Matcher(self.grammar, self.vocab)
        self.reset()

    def reset(self) -> None:
        """Forget the current generation (done automatically when a new prompt arrives)."""
        self._ids = None  # last step's input_ids
        self.matchers: list[Matcher] = []

    def __call__(self, input_ids, scores):
        self._follow(input_ids)
        width, device, dtype = scores.shape[-1], scores.device, scores.dtype
        biases = [TORCH.get(m, width, device, dtype) for m in self.matchers]
        if len(biases) == 1:
            return scores + biases[0]
        import torch

        return scores + torch.stack(biases)

    def _follow(self, input_ids) -> None:
        """Bring one matcher per row up to ``input_ids``."""
        import torch

        prev = self._ids
        self._ids = input_ids
        if prev is None or input_ids.shape[1] != prev.shape[1] + 1:
            return self._start(input_ids.shape[0])
        if input_ids.shape[0] == prev.shape[0] and torch.equal(input_ids[:, :-1], prev):
            parents = list(range(len(self.matchers)))
        else:
            parents = []
            for row in input_ids[:, :-1]:
                hit = (prev == row).all(dim=1).nonzero()
                if hit.numel() == 0:  # not a continuation of last step: a new prompt
                    return self._start(input_ids.shape[0])
                parents.append(int(hit[0]))
        taken: set[int] = set()
        matchers = []
        for p in parents:
            matchers.append(self.matchers[p] if p not in taken else self.matchers[p].fork())
            taken.add(p)
        for m, token in zip(matchers, input_ids[:, -1].tolist()):
            m.advance(token)
        self.matchers = matchers

    def _start(self, rows: int) -> None:
        """A new prompt: every row at the grammar's start."""
        self.matchers = [self._fresh.fork() for _ in range(rows)]


def _stop_ids(tokenizer, model) -> set[int] | None:
    """The ids ``generate`` stops on (the generation config's EOS), so an allowed EOS really ends it."""
    config = getattr(model, "generation_config", None)
    ids = getattr(config, "eos_token_id", None) if config is not None else None
    if ids is None:
        return None
    ids = {ids} if isinstance(ids, int) else set(ids)
    return ids | ({tokenizer.eos_token_id} if getattr(tokenizer, "eos_token_id", None) is not None else set())
