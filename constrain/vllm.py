"""A vLLM logits processor, for both of vLLM 0.32's model runners.

    LLM(model=..., logits_processors=[constrain.vllm.JSONLogitsProcessor])
    vllm serve MODEL --logits-processors constrain.vllm:JSONLogitsProcessor

(installed, constrain also registers it under vLLM's ``vllm.logits_processors`` entry point, so
every engine loads it; a second copy in the same engine stays idle). A request opts in with
``SamplingParams(extra_args={"json_schema": schema, "whitespace": ..., "property_order": ..., "resources": ...})``,
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
  Speculative decoding: the V1 runner refuses custom logits processors when it is enabled; under
  Model Runner V2 a constrained request is ended at once with an error logged (a draft token per
  row is not followed).
- Model runners: the class implements the V1 runner's interface (``update_state`` with batch
  updates, ``apply(logits)``; what the CPU build runs) and Model Runner V2's (``add_request`` by
  request slot, ``apply(logits, ctx)``; the CUDA default), so the entry point loads under either
  (V2 refuses a V1-only plugin at engine start, whatever the requests ask). Under V2 each step
  reads the token fed to each constrained row and its position from the device (one copy), and
  output tokens it has not seen (a request resumed after preemption) from the request's history.
"""

from __future__ import annotations

import json
import logging
import weakref

import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality
from vllm.v1.worker.gpu.sample.logits_processor.interface import LogitsProcessor as RunnerV2LogitsProcessor

from automaton.matcher import Matcher
from automaton.vocab import Vocabulary
from compiler.errors import SchemaError
from compiler.grammar import compile

from .bias import TORCH

log = logging.getLogger("constrain")

SCHEMA_KEY = "json_schema"
OPTION_KEYS = ("whitespace", "property_order", "strict", "max_whitespace", "max_depth", "dialect", "resources")
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
    """One constrained request: its matcher and how many of its output tokens it has walked."""

    __slots__ = ("matcher", "output", "walked")

    def __init__(self, matcher: Matcher, output: list[int] | None = None):
        self.matcher, self.output, self.walked = matcher, output, 0

    def _back_to(self, walked: int) -> None:
        """vLLM discarded tokens (a KV load failure, a preemption): step back."""
        m = self.matcher
        m.rollback(min(self.walked - walked, len(m.history)))
        self.walked = walked

    def catch_up(self) -> Matcher:
        """V1 runner: walk the output tokens vLLM appended to the request's list since last step."""
        out, m = self.output, self.matcher
        if len(out) < self.walked:
            self._back_to(len(out))
        for t in out[self.walked:]:
            if t < 0:  # a placeholder vLLM did not fill in: the state would lag, so end here
                m.wedge("vLLM left output token placeholders unfilled (async scheduling with the processor "
                        "loaded only by its entry point: pass logits_processors=[...] explicitly)")
                break
            m.advance(t)
            self.walked += 1
        return m

    def walk_to(self, fed: int, token: int, outputs: torch.Tensor) -> Matcher:
        """Model Runner V2: this step fed ``token``, output token number ``fed`` (-1: the prompt's
        last), so the state must have walked ``fed + 1`` tokens; ``outputs`` is the request's
        output history, read only for tokens this row has not seen."""
        m = self.matcher
        if self.walked > fed + 1:
            self._back_to(fed + 1)
        if self.walked < fed:
            for t in outputs[self.walked:fed].tolist():
                m.advance(t)
                self.walked += 1
        if self.walked == fed:
            m.advance(token)
            self.walked += 1
        return m


class JSONLogitsProcessor(LogitsProcessor, RunnerV2LogitsProcessor):
    @classmethod
    def validate_params(cls, sampling_params) -> None:
        request_grammar(sampling_params)

    def __init__(self, vllm_config, *runner_args):
        """V1 runner: ``(vllm_config, device, is_pin_memory)``; V2: ``(vllm_config, req_states)``."""
        other = _ENGINES.get(id(vllm_config))
        self.active = other is None or other() is None  # the entry point and an explicit list: one works
        if self.active:
            _ENGINES[id(vllm_config)] = weakref.ref(self)
        self._config = vllm_config  # held, so its id stays this engine's while we live
        self.req_states = runner_args[0] if len(runner_args) == 1 else None
        self.device = self.req_states.device if self.req_states is not None else runner_args[0]
        self.speculative = getattr(vllm_config, "speculative_config", None) is not None
        self.rows: dict[int, _Row] = {}  # V1: batch position; V2: request slot
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

    def add_request(self, req_idx: int, sampling_params) -> bool:
        """Model Runner V2: a request takes slot ``req_idx`` (whatever held it before is gone)."""
        row = self._new_row(sampling_params, None) if self.active else None
        if row is None:
            self.rows.pop(req_idx, None)
            return False
        if self.speculative:
            row.matcher.wedge("constrain does not follow speculative decoding's draft tokens: the request "
                              "ends here (serve constrained requests without a speculative config)")
        self.rows[req_idx] = row
        return True

    def _new_row(self, params, output: list[int] | None) -> _Row | None:
        try:
            grammar = request_grammar(params)
        except ValueError as exc:  # validate_params was bypassed: end the request at once
            matcher = Matcher(compile(True), self.vocab)
            matcher.wedge(str(exc))
            return _Row(matcher, output)
        if grammar is None:
            return None
        return _Row(Matcher(grammar, self.vocab), output)

    def apply(self, logits: torch.Tensor, ctx=None) -> torch.Tensor:
        """V1 runner: ``apply(logits)``, rows keyed by batch position; V2: ``apply(logits, ctx)``."""
        if not self.rows:
            return logits
        if ctx is None:
            order = sorted(self.rows)
            matchers = [self.rows[i].catch_up() for i in order]
        else:
            order, matchers = self._follow(ctx, logits.shape[0])
            if not order:
                return logits
        width = logits.shape[-1]
        stacked = torch.stack([TORCH.get(m, width, logits.device, logits.dtype) for m in matchers])
        if len(order) == logits.shape[0] and order[-1] == len(order) - 1:
            logits += stacked
        else:
            logits.index_add_(0, torch.tensor(order, device=logits.device), stacked)
        return logits

    def _follow(self, ctx, n_rows: int) -> tuple[list[int], list[Matcher]]:
        """Model Runner V2: the logits rows of constrained requests and their matchers, walked to
        the tokens this step fed."""
        slots = ctx.idx_mapping_np.tolist()
        if n_rows != len(slots):  # several rows a request: speculative decoding (those rows are wedged)
            slots = ctx.expanded_idx_mapping.tolist()
        found = [(r, s) for r, s in enumerate(slots) if s in self.rows]
        if not found:
            return [], []
        order = [r for r, _ in found]
        if self.speculative:
            return order, [self.rows[s].matcher for _, s in found]
        at = torch.tensor(order, device=ctx.input_ids.device)
        tokens, positions = torch.stack((ctx.input_ids[at].long(), ctx.pos[at].long())).tolist()
        prompt_len, history = self.req_states.prompt_len.np, self.req_states.all_token_ids.gpu
        matchers = []
        for (_, slot), token, pos in zip(found, tokens, positions):
            start = int(prompt_len[slot])
            matchers.append(self.rows[slot].walk_to(pos - start, token, history[slot, start:]))
        return order, matchers
