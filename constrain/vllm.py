"""A vLLM logits processor (the V1 model runner's batch-level interface).

    LLM(model=..., logits_processors=[constrain.vllm.JSONLogitsProcessor])
    vllm serve MODEL --logits-processors constrain.vllm:JSONLogitsProcessor

(installed, constrain also registers it under vLLM's ``vllm.logits_processors`` entry point, so
every engine loads it; a second copy in the same engine stays idle). A request opts in with
``SamplingParams(extra_args={"json_schema": schema, "whitespace": ..., "property_order": ...})``,
or ``vllm_xargs`` in the OpenAI server's request body (a schema given there as JSON text). Other
requests are left alone.

- A schema that does not compile is refused at the request by ``validate_params`` (the server
  answers 400 with our message) and the engine goes on serving.
- One ``Vocabulary`` per engine, from the engine's tokenizer and generation config; grammars come
  from ``constrain.compile``'s cache, so requests with the same schema share their masks.
- Each constrained row is a ``Matcher`` (the wedge guard and EOS rule) fed from the request's
  output tokens, which vLLM keeps current; rows follow vLLM's batch updates (added, removed, moved,
  swapped). Every constrained row of a step is masked by one ``index_add_`` of ready 0/-inf
  vectors kept on the logits' device, as wide as the model's (padded) vocabulary.
- ``n > 1``: vLLM runs each sample as its own request, each constrained on its own. Prefix
  caching reuses prompt computation only; the automaton state depends on the output tokens alone.
  Speculative decoding: vLLM refuses custom logits processors when it is enabled.
"""

from __future__ import annotations

import json
import logging
import weakref

import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from automaton.matcher import Matcher
from automaton.vocab import Vocabulary
from compiler.errors import SchemaError
from compiler.grammar import compile

from .bias import TORCH

log = logging.getLogger("constrain")

SCHEMA_KEY = "json_schema"
OPTION_KEYS = ("whitespace", "property_order", "strict", "max_whitespace", "max_depth")
_ENGINES: dict[int, weakref.ref] = {}  # id(vllm_config) -> its active processor


def request_grammar(params):
    """The grammar a request asks for (None when it asks for none); ``ValueError`` with our
    message when its schema or options are wrong."""
    args = getattr(params, "extra_args", None) or {}
    if SCHEMA_KEY not in args:
        return None
    schema = args[SCHEMA_KEY]
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as exc:
            raise ValueError(f"constrain: extra_args[{SCHEMA_KEY!r}] is not JSON: {exc}") from None
    options = {k: args[k] for k in OPTION_KEYS if k in args}
    try:
        return compile(schema, **options)
    except (SchemaError, TypeError, ValueError) as exc:
        raise ValueError(f"constrain: {exc}") from None


class _Row:
    """One constrained request: its matcher and the output tokens it has walked."""

    __slots__ = ("matcher", "output", "walked")

    def __init__(self, matcher: Matcher, output: list[int]):
        self.matcher, self.output, self.walked = matcher, output, 0

    def catch_up(self) -> Matcher:
        out, m = self.output, self.matcher
        if len(out) < self.walked:  # vLLM discarded tokens (a KV load failure): step back
            m.rollback(min(self.walked - len(out), len(m.history)))
            self.walked = len(out)
        for t in out[self.walked:]:
            if t < 0:  # a placeholder vLLM did not fill in: the state would lag, so end here
                m.wedge("vLLM left output token placeholders unfilled (async scheduling with the processor "
                        "loaded only by its entry point: pass logits_processors=[...] explicitly)")
                break
            m.advance(t)
            self.walked += 1
        return m


class JSONLogitsProcessor(LogitsProcessor):
    @classmethod
    def validate_params(cls, sampling_params) -> None:
        request_grammar(sampling_params)

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool):
        other = _ENGINES.get(id(vllm_config))
        self.active = other is None or other() is None  # the entry point and an explicit list: one works
        if self.active:
            _ENGINES[id(vllm_config)] = weakref.ref(self)
        self._config = vllm_config  # held, so its id stays this engine's while we live
        self.device = device
        self.rows: dict[int, _Row] = {}
        self._vocab: Vocabulary | None = None
        self._model_config = vllm_config.model_config

    @property
    def vocab(self) -> Vocabulary:
        """The engine's vocabulary, built once from its tokenizer at the first constrained request."""
        if self._vocab is None:
            from vllm.tokenizers import cached_tokenizer_from_config

            config = self._model_config
            tokenizer = cached_tokenizer_from_config(config)
            eos = config.try_get_generation_config().get("eos_token_id")
            eos = set() if eos is None else {eos} if isinstance(eos, int) else set(eos)
            if getattr(tokenizer, "eos_token_id", None) is not None:
                eos.add(tokenizer.eos_token_id)
            self._vocab = Vocabulary.from_transformers(tokenizer, vocab_size=config.get_vocab_size(),
                                                       eos_ids=eos or None)
        return self._vocab

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None or not self.active:
            return
        rows = self.rows
        for index in batch_update.removed:
            rows.pop(index, None)
        for index, params, _prompt, output in batch_update.added:
            row = self._new_row(params, output)
            if row is None:
                rows.pop(index, None)
            else:
                rows[index] = row
        for a, b, direction in batch_update.moved:
            ra, rb = rows.pop(a, None), rows.pop(b, None)
            if ra is not None:
                rows[b] = ra
            if rb is not None and direction == MoveDirectionality.SWAP:
                rows[a] = rb

    def _new_row(self, params, output: list[int]) -> _Row | None:
        try:
            grammar = request_grammar(params)
        except ValueError as exc:  # validate_params was bypassed: end the request at once
            matcher = Matcher(compile(True), self.vocab)
            matcher.wedge(str(exc))
            return _Row(matcher, output)
        if grammar is None:
            return None
        return _Row(Matcher(grammar, self.vocab), output)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self.rows:
            return logits
        width = logits.shape[-1]
        order = sorted(self.rows)
        biases = [TORCH.get(self.rows[i].catch_up(), width, logits.device, logits.dtype) for i in order]
        stacked = torch.stack(biases)
        if len(order) == logits.shape[0] and order[-1] == len(order) - 1:
            logits += stacked
        else:
            logits.index_add_(0, torch.tensor(order, device=logits.device), stacked)
        return logits
