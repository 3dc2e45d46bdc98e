"""Real generation on this CPU: SmolLM2-135M-Instruct through llama-cpp-python and through transformers."""

import json
import logging

import jsonschema
import numpy as np
import pytest

import constrain
from generation_cases import DUNES, ITINERARY, THREE_STRINGS, assert_valid
from automaton.matcher import Matcher

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is installed by .ci/run")
transformers = pytest.importorskip("transformers", reason="transformers is installed by .ci/run")
torch = pytest.importorskip("torch", reason="torch is installed by .ci/run")

from constrain.hf import JSONLogitsProcessor as HFProcessor  # noqa: E402
from constrain.llama_cpp import JSONLogitsProcessor as LlamaProcessor  # noqa: E402



@pytest.fixture(scope="module")
def llm(gguf_path_by_name):
    return llama_cpp.Llama(model_path=str(gguf_path_by_name("smollm2")), n_ctx=1024, seed=0, verbose=False)


@pytest.fixture(scope="module")
def hf(gguf_path_by_name):
    path = gguf_path_by_name("smollm2")
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return tok, model


def chat(llm, schema, prompt, **kwargs):
    proc = LlamaProcessor(schema, llm)
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        logits_processor=llama_cpp.LogitsProcessorList([proc]), max_tokens=80, temperature=0.0, **kwargs)
    return out["choices"][0]["message"]["content"], proc




def test_llama_cpp_picks_the_accented_destination(llm):
    """The enum value with non-ASCII letters decodes exactly."""
    text, _ = chat(llm, ITINERARY, DUNES)
    assert_valid(text, ITINERARY)
    assert json.loads(text)["destination"] == "Lençóis Maranhenses"


def test_llama_cpp_array_of_exactly_three_strings(llm):
    """A root array with minItems = maxItems = 3 gives exactly three strings."""
    text, _ = chat(llm, THREE_STRINGS, "Name some fruits as a JSON array.")
    assert_valid(text, THREE_STRINGS)
    assert len(json.loads(text)) == 3


def test_llama_cpp_streaming(llm):
    """Streaming chunks concatenate to a valid document."""
    proc = LlamaProcessor(ITINERARY, llm)
    chunks = llm.create_chat_completion(messages=[{"role": "user", "content": DUNES}], max_tokens=80,
                                        temperature=0.0, stream=True,
                                        logits_processor=llama_cpp.LogitsProcessorList([proc]))
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert_valid(text, ITINERARY)


class ForceLlamaToken:
    """A llama-cpp-python processor placed after ours that bypasses the mask: forces ``token`` as
    generated token number ``at``."""

    def __init__(self, token, at):
        self.token, self.at, self.prompt_len = token, at, None

    def __call__(self, input_ids, scores):
        if self.prompt_len is None:
            self.prompt_len = len(input_ids)
        if len(input_ids) - self.prompt_len == self.at:
            scores[:] = -np.inf
            scores[self.token] = 0.0
        return scores


def test_llama_cpp_wedge_guard_logs_once_then_ends(llm, caplog):
    """Through llama-cpp-python: a forced illegal token gives one error line, then EOS ends the reply."""
    bad = llm.tokenize(b"]", add_bos=False, special=False)[0]
    ours = LlamaProcessor(ITINERARY, llm)
    with caplog.at_level(logging.ERROR, logger="constrain"):
        out = llm.create_chat_completion(
            messages=[{"role": "user", "content": DUNES}], max_tokens=30, temperature=0.0,
            logits_processor=llama_cpp.LogitsProcessorList([ours, ForceLlamaToken(bad, 2)]))
    errors = [r for r in caplog.records if r.name == "constrain" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(bad) in errors[0].getMessage()
    assert ours.generated[2] == bad and len(ours.generated) == 3
    assert out["choices"][0]["finish_reason"] == "stop"


def test_llama_cpp_next_chat_turn_starts_a_new_document(llm):
    """The same processor over two chat turns: the second prompt extends the first reply, and is
    still a new generation (not a continuation walked through the chat template's tokens)."""
    proc = LlamaProcessor(ITINERARY, llm)
    messages = [{"role": "user", "content": DUNES}]
    first = llm.create_chat_completion(messages=messages, max_tokens=80, temperature=0.0,
                                       logits_processor=llama_cpp.LogitsProcessorList([proc]))
    reply = first["choices"][0]["message"]["content"]
    assert_valid(reply, ITINERARY)
    messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Another one, please."}]
    second = llm.create_chat_completion(messages=messages, max_tokens=80, temperature=0.0,
                                        logits_processor=llama_cpp.LogitsProcessorList([proc]))
    assert_valid(second["choices"][0]["message"]["content"], ITINERARY)


def test_llama_cpp_object_in_any_order_set_by_set(llm):
    """Twelve names in any order, sampled: the sets of names written are lowered as the generation
    reaches them, and the document it ends on is valid."""
    names = ["north", "south", "east", "west", "up", "down", "left", "right", "front", "back", "inside", "outside"]
    schema = {"type": "object", "properties": {n: {"type": "integer", "minimum": 0, "maximum": 9} for n in names},
              "required": ["west", "up", "back"], "maxProperties": 4, "additionalProperties": False}
    proc = LlamaProcessor(schema, llm, property_order="any")
    before = proc.grammar.program.size
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Score the directions back, up and west from 0 to 9 as JSON."}],
        logits_processor=llama_cpp.LogitsProcessorList([proc]), max_tokens=80, temperature=0.8, seed=5)
    text = out["choices"][0]["message"]["content"]
    assert constrain.compile(schema, property_order="any").accepts(text), text
    jsonschema.validate(json.loads(text), schema)
    assert proc.grammar.program.size > before  # (sets made during the generation)


def test_llama_cpp_distinct_values_of_a_large_enum_set_by_set(llm):
    """Twenty colours, each at most once, sampled: the sets of values used are lowered as the
    generation reaches them (2**20 could not be made at compile), and the list it ends on is valid."""
    colours = ["red", "green", "blue", "yellow", "purple", "orange", "pink", "brown", "black", "white", "grey",
               "cyan", "magenta", "lime", "navy", "teal", "olive", "maroon", "silver", "gold"]
    schema = {"type": "array", "items": {"enum": colours}, "uniqueItems": True, "minItems": 3, "maxItems": 8}
    proc = LlamaProcessor(schema, llm)
    before = proc.grammar.program.size
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": "List some colours of the rainbow as a JSON array."}],
        logits_processor=llama_cpp.LogitsProcessorList([proc]), max_tokens=80, temperature=0.8, seed=7)
    text = out["choices"][0]["message"]["content"]
    assert constrain.compile(schema).accepts(text), text
    jsonschema.validate(json.loads(text), schema)
    assert proc.grammar.program.size > before  # (sets made during the generation)


def hf_generate(hf, schema, prompts, **kwargs):
    tok, model = hf
    proc = HFProcessor(schema, tok, model=model)
    tok.padding_side = "left"
    batch = tok([tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False)
                 for p in prompts], return_tensors="pt", padding=True)
    out = model.generate(**batch, max_new_tokens=60, logits_processor=[proc], pad_token_id=tok.pad_token_id or 0,
                         **kwargs)
    return [tok.decode(row[batch["input_ids"].shape[1]:], skip_special_tokens=True) for row in out]


def test_transformers_greedy_batch(hf):
    """A batch of two prompts, greedy: each row its own state, each output valid."""
    for text in hf_generate(hf, ITINERARY, [DUNES, "A beach holiday in Brazil, as JSON."], do_sample=False):
        assert_valid(text, ITINERARY)


def test_transformers_sampling_and_beams(hf):
    """Sampling and beam search (rows reordered between steps) still give valid documents."""
    torch.manual_seed(0)
    for text in hf_generate(hf, THREE_STRINGS, ["Three animals, JSON array."], do_sample=True, temperature=1.5):
        assert_valid(text, THREE_STRINGS)
        assert len(json.loads(text)) == 3
    for text in hf_generate(hf, THREE_STRINGS, ["Three animals, JSON array."], num_beams=3, do_sample=False):
        assert_valid(text, THREE_STRINGS)


class ForceToken:
    """A processor placed after ours that bypasses the mask: forces ``token`` at step ``at``."""

    def __init__(self, token, at, prompt_len):
        self.token, self.at, self.prompt_len = token, at, prompt_len

    def __call__(self, input_ids, scores):
        if input_ids.shape[1] - self.prompt_len == self.at:
            scores = torch.full_like(scores, float("-inf"))
            scores[:, self.token] = 0.0
        return scores


@pytest.mark.parametrize("forced", ["illegal", "special"])
def test_wedge_guard_logs_once_then_ends(hf, caplog, forced):
    """A bypassed mask (an illegal or a special token) gives one error line, then EOS, no exception."""
    tok, model = hf
    ids = tok.apply_chat_template([{"role": "user", "content": DUNES}], add_generation_prompt=True,
                                  return_tensors="pt", return_dict=True)
    prompt_len = ids["input_ids"].shape[1]
    token = tok.convert_tokens_to_ids("<|im_start|>") if forced == "special" else tok.encode("]")[0]
    ours = HFProcessor(ITINERARY, tok, model=model)
    with caplog.at_level(logging.ERROR, logger="constrain"):
        out = model.generate(**ids, max_new_tokens=30, do_sample=False,
                             logits_processor=[ours, ForceToken(token, 2, prompt_len)])
    errors = [r for r in caplog.records if r.name == "constrain" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(token) in errors[0].getMessage()
    generated = out[0, prompt_len:].tolist()
    assert generated[2] == token
    assert generated[3] in ours.vocab.eos_ids and len(generated) == 4


def test_literal_the_vocabulary_cannot_spell_raw_is_reached_by_its_escape(vocabulary_by_name):
    """With every token holding the bytes of 'ç' removed, the enum value is still reachable as \\u00e7."""
    full = vocabulary_by_name("llama-bpe")
    stripped = [None if b and b"\xc3" in b else b for b in full.token_bytes]
    vocab = type(full)(stripped, full.eos_ids, size=full.size)
    grammar = constrain.compile({"const": "ç"}, whitespace="compact")
    m = Matcher(grammar, vocab)
    text = b""
    for _ in range(20):
        if m.accepting:
            break
        allowed = np.flatnonzero(m.mask())
        tid = int(min(allowed, key=lambda t: len(vocab.token_bytes[t] or b"")))  # shortest: spells escapes
        assert m.advance(tid)
        text += vocab.token_bytes[tid]
    assert m.accepting and json.loads(text) == "ç" and b"\\u00" in text.lower()
