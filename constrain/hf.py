"""A ``transformers`` logits processor: ``model.generate(..., logits_processor=[JSONLogitsProcessor(schema, tokenizer)])``.

Masks are cached as bool tensors per automaton state and device, so a warm step costs a dict
lookup per row and one ``masked_fill`` for the batch.
"""

from __future__ import annotations

from automaton.vocab import Vocabulary

from .rows import RowTracker
from .schema_input import as_grammar


class JSONLogitsProcessor:
    def __init__(self, schema_or_grammar, tokenizer, *, model=None, vocab: Vocabulary | None = None, **compile_options):
        import torch  # noqa: F401  (fail here, clearly, if torch is missing)

        self.grammar = as_grammar(schema_or_grammar, compile_options)
        self.vocab = vocab or Vocabulary.from_transformers(tokenizer, model=model, eos_ids=_stop_ids(tokenizer, model))
        self.tracker = RowTracker(self.grammar, self.vocab)
        self._prompt = None
        self._tensors: dict[tuple[int, str, int], object] = {}

    def reset(self) -> None:
        """Forget the current generation (done automatically when a new prompt arrives)."""
        self._prompt = None
        self.tracker.reset()

    def _is_new_prompt(self, input_ids) -> bool:
        import torch

        p = self._prompt
        return (p is None or input_ids.shape[0] != p.shape[0] or input_ids.shape[1] < p.shape[1]
                or not torch.equal(input_ids[:, : p.shape[1]], p))

    def __call__(self, input_ids, scores):
        import torch  # imported lazily: torch is an optional dependency

        if self._is_new_prompt(input_ids):
            self.reset()
            self._prompt = input_ids.clone()
        generated = [tuple(row) for row in input_ids[:, self._prompt.shape[1]:].tolist()]
        rows = self.tracker.rows(generated)
        width = scores.shape[-1]
        allowed = torch.stack([self._tensor(row, width, scores.device) for row in rows])
        return scores.masked_fill(~allowed, float("-inf"))

    def _tensor(self, row, width: int, device):
        import torch

        key = (row.state if row.status == "ok" else -1, str(device), width)
        t = self._tensors.get(key)
        if t is None:
            mask = self.tracker.mask(row)
            full = torch.zeros(width, dtype=torch.bool)
            n = min(width, mask.shape[0])
            full[:n] = torch.from_numpy(mask[:n].copy())
            t = full.to(device)
            if len(self._tensors) > 4096:
                self._tensors.clear()
            self._tensors[key] = t
        return t


def _stop_ids(tokenizer, model) -> set[int] | None:
    """The ids ``generate`` stops on (the generation config's EOS), so an allowed EOS really ends it."""
    config = getattr(model, "generation_config", None)
    ids = getattr(config, "eos_token_id", None) if config is not None else None
    if ids is None:
        return None
    ids = {ids} if isinstance(ids, int) else set(ids)
    return ids | ({tokenizer.eos_token_id} if getattr(tokenizer, "eos_token_id", None) is not None else set())
