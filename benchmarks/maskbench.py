"""MaskBench runner: compile each schema of the benchmark and check its test instances.

    python benchmarks/maskbench.py --text DATA_DIR [--files LIST] [--limit N] [--timeout S] [--json OUT]
    python benchmarks/maskbench.py --tokens DATA_DIR [--peers | --engines NAMES] [--files LIST] [--limit N] [--plot DIR] ...

DATA_DIR holds MaskBench files (``{"schema": ..., "tests": [{"valid": ..., "data": ...}]}``, see
``../shared/maskbench/README.md``); LIST names the files to run, one per line (default: every
``*.json`` of DATA_DIR, sorted); ``--limit`` keeps the first N.

``--text`` checks bytes: each schema is compiled with whitespace "flexible", and each instance's
``json.dumps(data, ensure_ascii=False)`` (MaskBench's text, with its ", " and ": " separators) is
walked through the automaton. We require the *complete* text to be accepted, which is stricter than
MaskBench (which never checks the end state); an invalid instance whose whole text is a live prefix
is rejected by us but would count as accepted by MaskBench, so such cases are counted apart
("MaskBench-protocol invalidation errors"). Per schema we also run ``Grammar.find_trap(500)``: a
reachable state that cannot reach acceptance is a trap. Compile time is ``constrain.compile`` plus
the first byte row of the lazy automaton.

``--tokens`` is MaskBench's token protocol with the Llama 3 tokenizer (``llama3_tokenizer.py``:
llama.cpp's llama-bpe vocabulary, EOS ``<|eot_id|>``). Per schema, time to first mask (TTFM) runs
from the start of compilation to the first mask (for us: ``constrain.compile``, the ``Matcher``
with its token index, the first ``mask()``). Per test instance the text above is tokenized without
special tokens, and per token: compute the mask, check the token is allowed (not timed), commit it;
mask plus commit is one "time between masks" (TBM) sample (a refused token's sample is its mask
alone). The headline outcomes are MaskBench's: a valid instance passes when every token is allowed,
an invalid one when some token is refused. The stricter variant is printed beside them: after the
last token the mask must allow EOS for a valid instance, and an invalid instance whose tokens are all
allowed passes only if EOS is then refused. ``--peers`` runs llguidance, XGrammar and outlines-core
(when installed) on the same files in the same run, taking turns schema by schema (each in its own
worker process; which engine goes first rotates), so that the machine's drift over a run reaches
every engine alike, each through its own JSON-schema API with the same tokenizer and the same protocol, single-threaded, with the same
compile time-out: llguidance with ``whitespace_flexible``; XGrammar with ``any_whitespace=True,
strict_mode=False`` (absent ``additionalProperties`` stays true, as in the specification);
outlines-core with its default whitespace pattern (``[ ]?``, enough for MaskBench's texts).

Each worker freezes the garbage collector's view of its set-up (``gc.freeze()`` once the
tokenizer and the engine are loaded, as servers do after start-up), the same for every engine.

Each schema runs in a worker process (reused across schemas; killed and restarted when a compile
runs past ``--timeout`` seconds, or the checks past ``--check-timeout``). A worker loads the
tokenizer and the engine once, before its first compile clock starts.

Outcome per schema, first that applies: time-out (the worker killed, or the compiler's own
deadline hit), crash (an exception that is not a ``SchemaError``, or the worker died), compile
error (a ``SchemaError``; for a peer, any error its compiler raises), invalidation error (an invalid
instance accepted), validation error (a valid instance refused), passing. A refused valid instance
that is accepted with its object keys reordered (the schema's order at each place, or a few
permutations) is marked "key order only": our canonical shape fixes the key order (DESIGN §3),
MaskBench's instances do not always follow it.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import importlib.metadata
import importlib.util
import json
import math
import multiprocessing
import os
import signal
import sys
import time
import traceback
import warnings
from array import array
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

try:
    import constrain
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import constrain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance import accepted_in_any_order, key_order_variants  # noqa: E402  (the sibling script's key-order checks)
from compiler.any_order import LAZY_ORDER_MAX  # noqa: E402

OUTCOMES = ("passing", "compile_error", "validation_error", "invalidation_error", "timeout", "crash")
TRAP_BUDGET = 500
TEXT_LIMIT = 200
SHAPE_TRIES = 50  # other key orders tried on a refused valid instance
SETUP_TIMEOUT = 600.0  # seconds a fresh worker may take to load the tokenizer and an engine
SLOW_KEEP = 10  # slowest TBM samples kept per schema (and reported over the run)
PERCENTILES = (50, 90, 99, 99.9)


def instance_text(data) -> str:
    return json.dumps(data, ensure_ascii=False)


def _short(text: str, n: int = TEXT_LIMIT) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


# -- the worker side: text mode -----------------------------------------------------------------
def _dies_at(grammar, data: bytes) -> int | None:
    """Offset of the first byte the automaton refuses, or None when the whole text is a live prefix."""
    state = grammar.start
    for i, b in enumerate(data):
        state = grammar.step(state, b)
        if state < 0:
            return i
    return None


def compile_options() -> dict:
    """What every constrain compile of the run is given; workers, forked or spawned, inherit the
    property order through the environment (``--property-order``). No grammar cache, as XGrammar
    runs here (``cache_enabled=False``): MaskBench's schemas are all distinct, so a cache never hits
    and would only slow compiles (its 64 used grammars kept alive: about 13% at the median schema;
    the grammars it evicts are freed on a thread, off the compile, see ``compile_times.py --use``)."""
    return {"whitespace": "flexible", "property_order": os.environ.get("MASKBENCH_PROPERTY_ORDER", "schema"),
            "cache": False}


def compile_text(_engine, schema):
    """The grammar, and the first byte row of the lazy automaton (its first real work)."""
    grammar = constrain.compile(schema, **compile_options())
    grammar.step(grammar.start, ord("{"))
    return grammar, {"warnings": len(grammar.warnings)}


def check_text(grammar, schema, tests: list) -> dict:
    """Walk every test instance's text; list the instances the grammar judges wrongly (a refused
    valid instance that is accepted with its keys in another order is marked ``shape``); then look
    for a trap state."""
    failures = []
    prefix_accepts = []  # invalid, refused only because the text is incomplete
    for index, test in enumerate(tests):
        valid = bool(test.get("valid"))
        text = instance_text(test.get("data"))
        data = text.encode("utf-8", "surrogatepass")
        accepted = grammar.accepts(data)
        if accepted == valid:
            if not valid and _dies_at(grammar, data) is None:
                prefix_accepts.append({"index": index, "text": _short(text)})
            continue
        at = _dies_at(grammar, data) if valid else None
        failures.append({"index": index, "valid": valid, "text": _short(text), "dies_at": at,
                         "shape": valid and _key_order_only(grammar, test.get("data"), schema),
                         "context": None if at is None else _context(data, at, at)})
    trap = grammar.find_trap(TRAP_BUDGET)
    return {"tests": len(tests), "failures": failures, "prefix_accepts": prefix_accepts,
            "trap": None if trap is None else {"state": trap[0], "path": _short(trap[1].decode("utf-8", "replace"))}}


def _key_order_only(grammar, data, schema) -> bool:
    """A refused valid instance that the grammar accepts with its keys in another order, or that
    the schema compiled with ``property_order="any"`` accepts. The variants are compact texts:
    whitespace is flexible, so only their key order differs."""
    return (any(grammar.accepts(v) for v in key_order_variants(data, schema, SHAPE_TRIES))
            or accepted_in_any_order(grammar, instance_text(data)))


def _context(data: bytes, start: int, end: int) -> str:
    """Up to 40 bytes before ``start``, ▮, the bytes from ``start`` to ``end``, ▮, 20 bytes after."""
    mark = "\u25ae".encode()
    piece = data[max(0, start - 40): start] + mark
    if end > start:
        piece += data[start:end] + mark
    return (piece + data[end: end + 20]).decode("utf-8", "replace")


def _json_path(data: bytes, offset: int) -> str:
    """The JSON pointer of the value being written at byte ``offset`` of a JSON text (a key being
    written is marked ``(key)``), from a scan of the bytes before it."""
    stack: list[list] = []  # [kind, key or index]
    in_string = escaped = False
    key_start = -1
    expect_key = False
    for i in range(min(offset, len(data))):
        c = data[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:
                escaped = True
            elif c == 0x22:
                in_string = False
                if key_start >= 0:
                    try:
                        stack[-1][1] = json.loads(data[key_start: i + 1].decode("utf-8", "surrogatepass"))
                    except ValueError:
                        stack[-1][1] = "?"
                    key_start = -1
        elif c == 0x22:
            in_string = True
            key_start = i if expect_key else -1
        elif c == 0x7B:
            stack.append(["object", None])
            expect_key = True
        elif c == 0x5B:
            stack.append(["array", 0])
            expect_key = False
        elif c in (0x7D, 0x5D):
            if stack:
                stack.pop()
            expect_key = False
        elif c == 0x2C and stack:
            if stack[-1][0] == "array":
                stack[-1][1] += 1
            else:
                expect_key = True
        elif c == 0x3A:
            expect_key = False
    parts = [str(k).replace("~", "~0").replace("/", "~1") for _, k in stack if k is not None]
    pointer = "/" + "/".join(parts) if parts else "(root)"
    return pointer + (" (key)" if in_string and key_start >= 0 or expect_key and not in_string else "")


# -- the worker side: token mode ----------------------------------------------------------------
class Tokens:
    """The Llama 3 tokenizer and our ``Vocabulary`` of it. Loaded once in the parent before the
    workers fork (so a worker restarted after a time-out starts in a moment), else once per worker."""

    preloaded: Tokens | None = None

    @classmethod
    def preload(cls) -> None:
        if cls.preloaded is None:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the workers fork after the load
            cls.preloaded = cls()

    def __init__(self):
        import llama3_tokenizer
        from automaton.vocab import Vocabulary

        self.tokenizer = llama3_tokenizer.load()
        self.vocab = Vocabulary.from_transformers(self.tokenizer)
        self.eos = sorted(self.vocab.eos_ids)
        self.size = self.vocab.size

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)


class _Session:
    """One compiled schema behind the protocol's calls: ``mask()`` (the mask, or None when it is
    written into ``self.bits``), ``allowed(mask, token)``, ``advance(token) -> bool``, ``reset()``,
    ``eos_allowed(mask)``; ``probe()`` and ``describe(probe)`` say where a slow sample happened
    (constrain only: a peer's state is opaque)."""

    probe = None
    grammar = None

    def __init__(self, tokens: Tokens):
        self.tokens = tokens
        self.bits = None

    def allowed(self, _mask, token: int) -> bool:
        """Bit ``token`` of a 32-bit-word bitmask (llguidance's, XGrammar's and outlines-core's layout)."""
        return bool((int(self.bits[token >> 5]) >> (token & 31)) & 1)

    def eos_allowed(self, mask) -> bool:
        return any(self.allowed(mask, e) for e in self.tokens.eos)

    def _bitmask(self):
        """A (1, words) int32 bitmask for the engine to fill; ``self.bits`` is its row."""
        import numpy as np

        words = np.zeros((1, (self.tokens.size + 31) // 32), dtype=np.int32)
        self.bits = words[0]
        return words

    def describe(self, _probe) -> dict:
        return {}


class ConstrainEngine:
    name = "constrain"
    package = None

    def __init__(self, tokens: Tokens):
        import numpy as np
        from automaton.matcher import Matcher

        self.tokens = tokens
        self.matcher_class = Matcher
        self.eos = np.array(tokens.eos, dtype=np.int64)
        # Per-vocabulary work (the token trie) is done once per process, as the peers' tokenizer
        # set-up is: a throw-away schema builds it before the first TTFM clock starts.
        Matcher(constrain.compile({"type": "object"}), tokens.vocab).mask()

    def compile(self, schema):
        clock = time.perf_counter_ns
        t0 = clock()
        grammar = constrain.compile(schema, **compile_options())
        t1 = clock()
        matcher = self.matcher_class(grammar, self.tokens.vocab)
        t2 = clock()
        matcher.mask()
        t3 = clock()
        return ConstrainSession(self, grammar, matcher), {"compile": t1 - t0, "matcher": t2 - t1, "first_mask": t3 - t2}


class ConstrainSession(_Session):
    def __init__(self, engine: ConstrainEngine, grammar, matcher):
        super().__init__(engine.tokens)
        self.grammar, self.matcher, self.eos = grammar, matcher, engine.eos
        self.mask, self.advance, self.reset = matcher.mask, matcher.advance, matcher.reset
        # diagnostics only (internals, so guarded): was this state's mask computed before?
        self._cached = getattr(matcher.index, "_cache", None)

    @staticmethod
    def allowed(mask, token: int) -> bool:
        return bool(mask[token])

    def eos_allowed(self, mask) -> bool:
        return bool(mask[self.eos].any())

    def probe(self):
        state = self.matcher.state
        return state, self._cached is not None and state not in self._cached

    def describe(self, probe) -> dict:
        """The automaton state of a slow sample: its number of configurations (call stacks) and of
        allowed tokens, and how many states the lazy automaton had reached by the end of the schema."""
        state, cold = probe
        index = self.matcher.index
        detail = {"state": state, "cold": cold, "allowed": int(index.mask(state).sum())}
        kernels = getattr(index.dfa, "_kernels", None)
        if kernels is not None:
            detail.update(configs=len(kernels[state]), states=len(kernels))
        return detail


class PeerCompileError(Exception):
    """A peer engine refused the schema without raising (llguidance's error state)."""


class LLGuidanceEngine:
    name = "llguidance"
    package = "llguidance"

    def __init__(self, tokens: Tokens):
        import llguidance
        import llguidance.hf

        self.tokens = tokens
        self.matcher_class = llguidance.LLMatcher
        self.tokenizer = llguidance.hf.from_tokenizer(tokens.tokenizer, n_vocab=tokens.size, eos_token=tokens.eos)

    def compile(self, schema):
        grammar = self.matcher_class.grammar_from_json_schema(schema, defaults={"whitespace_flexible": True})
        matcher = self.matcher_class(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise PeerCompileError(matcher.get_error())
        session = _Session(self.tokens)
        bits = session._bitmask()[0]
        session.mask = partial(matcher.unsafe_compute_mask_ptr, bits.ctypes.data, bits.nbytes)
        session.advance, session.reset = matcher.consume_token, matcher.reset
        session.mask()
        if matcher.is_error():
            raise PeerCompileError(matcher.get_error())
        return session, {}


class XGrammarEngine:
    name = "xgrammar"
    package = "xgrammar"

    def __init__(self, tokens: Tokens):
        import torch
        import xgrammar

        torch.set_num_threads(1)
        self.tokens = tokens
        self.matcher_class = xgrammar.GrammarMatcher
        info = xgrammar.TokenizerInfo.from_huggingface(tokens.tokenizer, vocab_size=tokens.size, stop_token_ids=tokens.eos)
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    def compile(self, schema):
        compiled = self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)
        matcher = self.matcher_class(compiled)
        session = _Session(self.tokens)
        session.mask = partial(matcher.fill_next_token_bitmask, session._bitmask())
        session.advance, session.reset = matcher.accept_token, matcher.reset
        session.mask()
        return session, {}


class OutlinesCoreEngine:
    name = "outlines-core"
    package = "outlines_core"

    def __init__(self, tokens: Tokens):
        import outlines_core

        self.tokens = tokens
        self.oc = outlines_core
        by_bytes: dict[bytes, list[int]] = {}
        for tid, data in enumerate(tokens.vocab.token_bytes):
            if data is not None:
                by_bytes.setdefault(data, []).append(tid)
        self.vocabulary = outlines_core.Vocabulary(tokens.eos[0], by_bytes)

    def compile(self, schema):
        regex = self.oc.json_schema.build_regex_from_schema(json.dumps(schema))
        guide = self.oc.Guide(self.oc.Index(regex, self.vocabulary))
        session = _Session(self.tokens)
        bits = session._bitmask()[0]
        session.mask = partial(guide.write_mask_into, bits.ctypes.data, bits.size, 4)

        def advance(token: int, _advance=guide.advance) -> bool:
            try:
                _advance(token, False)
            except Exception:  # noqa: BLE001 - outlines-core raises on a token it does not allow
                return False
            return True

        session.advance, session.reset = advance, guide.reset
        session.mask()
        return session, {}


TOKEN_ENGINES = {e.name: e for e in (ConstrainEngine, LLGuidanceEngine, XGrammarEngine, OutlinesCoreEngine)}
PEERS = ("llguidance", "xgrammar", "outlines-core")


def engine_version(name: str) -> str | None:
    """The installed version of a peer (None when it is not installed); "" for constrain itself."""
    package = TOKEN_ENGINES[name].package
    if package is None:
        return ""
    if importlib.util.find_spec(package) is None:
        return None
    try:
        return importlib.metadata.version(package.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        return "?"


def compile_tokens(engine, schema):
    """The engine's session after its first mask, and the phases it timed (constrain only)."""
    return engine.compile(schema)


def check_tokens(session: _Session, schema, tests: list) -> dict:
    """MaskBench's token protocol over every test instance (see the module docstring)."""
    tokens = session.tokens
    clock = time.perf_counter_ns
    mask_of, allowed, advance, probe = session.mask, session.allowed, session.advance, session.probe
    samples = array("q")
    cold = bytearray()  # constrain: 1 where the sample's state had no cached mask
    slow: list[tuple] = []  # a min-heap of the slowest samples: (ns, index, position, mask_ns, advance_ns, probe)
    failures, end_failures, prefix_accepts, mismatches, encoded = [], [], [], [], {}
    skipped = 0
    for index, test in enumerate(tests):
        valid = bool(test.get("valid"))
        text = instance_text(test.get("data"))
        try:
            ids = encoded[index] = tokens.encode(text)
        except Exception:  # noqa: BLE001 - a lone surrogate the tokenizer cannot take
            skipped += 1
            continue
        session.reset()
        refused = None
        for pos, token in enumerate(ids):
            if probe is not None:
                where = probe()
                cold.append(where[1])
            else:
                where = None
            t0 = clock()
            mask = mask_of()
            t1 = clock()
            if not allowed(mask, token):
                samples.append(t1 - t0)
                refused = pos
                break
            t2 = clock()
            walked = advance(token)
            t3 = clock()
            ns = t1 - t0 + t3 - t2
            samples.append(ns)
            if len(slow) < SLOW_KEEP:
                heapq.heappush(slow, (ns, index, pos, t1 - t0, t3 - t2, where))
            elif ns > slow[0][0]:
                heapq.heapreplace(slow, (ns, index, pos, t1 - t0, t3 - t2, where))
            if not walked:
                mismatches.append(_token_detail(tokens, ids, pos, text, valid, index))
                refused = pos
                break
        at_end = refused is None and session.eos_allowed(mask_of())
        if valid and refused is not None:
            detail = _token_detail(tokens, ids, pos, text, valid, index)
            if session.grammar is not None:
                detail["shape"] = _key_order_only(session.grammar, test.get("data"), schema)
                detail["state"] = where[0] if where else None
            failures.append(detail)
        elif valid and not at_end:
            end_failures.append({"index": index, "valid": True, "text": _short(text), "tokens": len(ids)})
        elif not valid and refused is None:
            detail = {"index": index, "valid": False, "text": _short(text), "tokens": len(ids),
                      "why_invalid": _why_invalid(schema, test.get("data"))}
            (failures if at_end else prefix_accepts).append(detail)
    return {"tests": len(tests), "failures": failures, "prefix_accepts": prefix_accepts,
            "end_failures": end_failures, "mismatches": mismatches, "skipped": skipped,
            "tbm_ns": samples.tobytes(), "cold": bytes(cold),
            "slow": [_slow_detail(session, encoded[i], i, pos, ns, m, a, w, tests)
                     for ns, i, pos, m, a, w in sorted(slow, reverse=True)]}


def _token_detail(tokens: Tokens, ids: list[int], pos: int, text: str, valid: bool, index: int) -> dict:
    data = text.encode("utf-8", "surrogatepass")
    start = sum(len(tokens.vocab.token_bytes[t] or b"") for t in ids[:pos])
    piece = tokens.vocab.token_bytes[ids[pos]] or b""
    return {"index": index, "valid": valid, "text": _short(text), "position": pos, "tokens": len(ids),
            "token": ids[pos], "token_text": piece.decode("utf-8", "replace"), "offset": start,
            "path": _json_path(data, start), "context": _context(data, start, start + len(piece))}


def _slow_detail(session, ids, index, pos, ns, mask_ns, advance_ns, probe, tests) -> dict:
    detail = _token_detail(session.tokens, ids, pos, instance_text(tests[index].get("data")),
                           bool(tests[index].get("valid")), index)
    detail.update(ns=ns, mask_ns=mask_ns, advance_ns=advance_ns)
    if probe is not None:
        try:
            detail.update(session.describe(probe))
        except Exception as exc:  # noqa: BLE001 - diagnostics must not fail the schema
            detail["describe_error"] = f"{type(exc).__name__}: {exc}"
    return detail


def _why_invalid(schema, data) -> str:
    """python-jsonschema's first error for an instance (with format assertion), or why there is none."""
    try:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        errors = sorted(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(data), key=lambda e: e.path)
    except Exception as exc:  # noqa: BLE001 - the oracle's own limits are reported, not raised
        return f"python-jsonschema could not check it: {type(exc).__name__}: {_short(str(exc), 120)}"
    if not errors:
        return "python-jsonschema finds it valid"
    e = errors[0]
    return f"{e.json_path}: {_short(e.message, 160)} (schema {'/'.join(map(str, e.schema_path))})"


COMPILES = {"text": compile_text, "tokens": compile_tokens}
CHECKS = {"text": check_text, "tokens": check_tokens}


def _compile_failure(exc: BaseException, peer: bool = False) -> dict:
    if isinstance(exc, constrain.SchemaTooComplex) and str(getattr(exc, "what", "")).startswith("compiling took over"):
        kind = "timeout"
    elif isinstance(exc, constrain.SchemaError) or (peer and isinstance(exc, Exception)
                                                    and not isinstance(exc, MemoryError)):
        kind = "compile_error"
    else:
        kind = "crash"
    info = {"kind": kind, "error": type(exc).__name__, "message": str(exc)[:500]}
    if isinstance(exc, constrain.UnsupportedKeyword):
        info["keyword"] = exc.keyword
    if kind == "crash":
        info["where"] = _innermost(exc)
    return info


def _innermost(exc: BaseException) -> str:
    """Where an unexpected exception was raised: the innermost frame, as ``file:line in function``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f"{Path(f.filename).name}:{f.lineno} in {f.name}"


def _limit_memory(memory_mb: int) -> None:
    """Let the worker grow by ``memory_mb`` beyond what it has mapped once its engine is loaded."""
    if not memory_mb:
        return
    try:
        import resource

        mapped = 0
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    mapped = int(line.split()[1]) * 1024
        limit = mapped + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def _worker(conn, memory_mb: int) -> None:
    """Serve jobs ``(mode, engine, path)``: send ("ready", info) once the engine is loaded (its
    first job only takes time), then ("compiled", info), then ("checked", info) if it compiled."""
    warnings.simplefilter("ignore")  # unknown formats warn; the grammar's warnings are counted instead
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's report-on-SIGTERM handler is not ours
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills us
    for name in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # single-threaded engines
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tokens = None
    engines: dict[str, object] = {}
    limited = False
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        mode, engine_name, path = job
        if mode == "tokens" and engine_name not in engines:
            try:
                tokens = tokens or Tokens.preloaded or Tokens()
                engines[engine_name] = TOKEN_ENGINES[engine_name](tokens)
                # as a server does after start-up: the tokenizer, the engine and their libraries
                # (transformers, torch) go to the collector's permanent generation, so a full
                # collection during a timed call does not rescan them (the same for every engine)
                gc.collect()
                gc.freeze()
            except Exception as exc:  # noqa: BLE001 - reported as the schema's crash
                conn.send(("ready", {"kind": "crash", "error": type(exc).__name__, "where": _innermost(exc),
                                     "message": f"setting up {engine_name}: {exc}"[:500]}))
                continue
        if not limited:
            _limit_memory(memory_mb)
            limited = True
        conn.send(("ready", {"kind": "ok"}))
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            schema, tests = doc["schema"], doc.get("tests") or []
        except Exception as exc:
            conn.send(("compiled", {"kind": "crash", "error": type(exc).__name__, "message": f"unreadable file: {exc}"}))
            continue
        compiled = result = None  # the previous schema's objects are freed here, not on the clock
        started = time.perf_counter_ns()
        try:
            compiled, info = COMPILES[mode](engines.get(engine_name), schema)
        except BaseException as exc:  # noqa: BLE001 - reported, never hidden
            info = _compile_failure(exc, peer=engine_name != "constrain")
            info["compile_ms"] = (time.perf_counter_ns() - started) / 1e6
            conn.send(("compiled", info))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            continue
        conn.send(("compiled", {"kind": "ok", "compile_ms": (time.perf_counter_ns() - started) / 1e6,
                                "details": info}))
        started = time.perf_counter_ns()
        try:
            result = CHECKS[mode](compiled, schema, tests)
            result["kind"] = "ok"
        except BaseException as exc:  # noqa: BLE001
            result = {"kind": "crash", "error": type(exc).__name__, "message": f"while checking: {exc}"[:500],
                      "where": _innermost(exc)}
        result["check_ms"] = (time.perf_counter_ns() - started) / 1e6
        conn.send(("checked", result))


class Worker:
    """A reusable worker process; restarted after a time-out or a death."""

    def __init__(self, memory_mb: int):
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.memory_mb = memory_mb
        self.process = None
        self.conn = None

    def _start(self):
        parent, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=_worker, args=(child, self.memory_mb), daemon=True)
        self.process.start()
        child.close()
        self.conn = parent

    def stop(self):
        if self.process is None:
            return
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        self.process = self.conn = None

    def close(self):
        if self.process is not None and self.process.is_alive():
            try:
                self.conn.send(None)
                self.process.join(5)
            except (OSError, BrokenPipeError):
                pass
        self.stop()

    def send(self, job):
        if self.process is None or not self.process.is_alive():
            self.stop()
            self._start()
        self.conn.send(job)

    def receive(self, timeout: float):
        """The next message, or "timeout" / "died" (the worker is then stopped)."""
        try:
            if self.conn.poll(timeout):
                return self.conn.recv()
            self.stop()
            return ("timeout", None)
        except (EOFError, OSError):
            code = self.process.exitcode if self.process is not None else None
            self.stop()
            return ("died", code)


# -- the parent side ----------------------------------------------------------------------------
@dataclass
class SchemaResult:
    file: str
    outcome: str
    engine: str = "constrain"
    tests: int = 0
    compile_ms: float | None = None  # text mode: compile + first byte row; token mode: TTFM
    check_ms: float | None = None
    error: str | None = None
    keyword: str | None = None
    message: str | None = None
    where: str | None = None  # innermost frame of a crash
    failures: list = field(default_factory=list)
    prefix_accepts: list = field(default_factory=list)
    trap: dict | None = None
    # token mode only
    strict_outcome: str | None = None  # with EOS checked after the last token
    compile_details: dict = field(default_factory=dict)  # text: warnings; tokens: constrain's TTFM parts (ns)
    end_failures: list = field(default_factory=list)  # valid, every token allowed, EOS refused at the end
    mismatches: list = field(default_factory=list)  # a token the mask allowed that advance() refused
    compiled: bool = False
    skipped: int = 0  # instances the tokenizer could not take
    slow: list = field(default_factory=list)
    tbm_ns: array = field(default_factory=lambda: array("q"), repr=False)
    cold: bytes = field(default=b"", repr=False)  # constrain: per TBM sample, 1 when the state's mask was not cached


def _await(worker, timeout, what: str, doing: str, res):
    """The worker's next answer, or None with ``res`` marked as a time-out or a crash."""
    tag, info = worker.receive(timeout)
    if tag == "timeout":
        res.outcome, res.message = "timeout", f"{what} over {timeout} s (worker killed)"
        return None
    if tag == "died":
        res.message = f"worker died while {doing} (exit code {info})"
        return None
    return info


def run_schema(worker: Worker, path: Path, mode: str, timeout: float, engine: str = "constrain",
               check_timeout: float | None = None) -> SchemaResult:
    res = SchemaResult(path.name, "crash", engine)
    worker.send((mode, engine, str(path)))
    tag, info = worker.receive(SETUP_TIMEOUT)
    if tag != "ready":
        res.message = f"worker {'took too long' if tag == 'timeout' else 'died'} loading {engine}"
        return res
    if info["kind"] != "ok":
        res.error, res.message, res.where = info.get("error"), info.get("message"), info.get("where")
        return res
    info = _await(worker, timeout, "compile", "compiling", res)
    if info is None:
        return res
    res.compile_ms, res.compile_details = info.get("compile_ms"), info.get("details") or {}
    if info["kind"] != "ok":
        res.outcome = info["kind"]
        res.error, res.keyword, res.message = info.get("error"), info.get("keyword"), info.get("message")
        res.where = info.get("where")
        return res
    res.compiled = True
    check_timeout = timeout if check_timeout is None else check_timeout
    info = _await(worker, check_timeout, "checks", "checking", res)
    if info is None:
        return res
    res.check_ms = info.get("check_ms")
    if info["kind"] != "ok":
        res.error, res.message, res.where = info.get("error"), info.get("message"), info.get("where")
        return res
    res.tests, res.failures, res.prefix_accepts = info["tests"], info["failures"], info["prefix_accepts"]
    invalid_accepted = any(not f["valid"] for f in res.failures)
    valid_refused = any(f["valid"] for f in res.failures)
    if mode == "text":
        res.trap = info["trap"]
        res.outcome = _outcome(invalid_accepted, valid_refused)
    else:
        res.end_failures, res.mismatches, res.skipped = info["end_failures"], info["mismatches"], info["skipped"]
        res.slow, res.cold = info["slow"], info["cold"]
        res.tbm_ns.frombytes(info["tbm_ns"])
        res.outcome = _outcome(invalid_accepted or bool(res.prefix_accepts), valid_refused)
        res.strict_outcome = _outcome(invalid_accepted, valid_refused or bool(res.end_failures))
    return res


def _outcome(invalid_accepted: bool, valid_refused: bool) -> str:
    return "invalidation_error" if invalid_accepted else "validation_error" if valid_refused else "passing"


def schema_files(data_dir: Path, files: Path | None = None, limit: int | None = None) -> list[Path]:
    data_dir = Path(data_dir)
    if files is not None:
        names = [line.strip() for line in Path(files).read_text(encoding="utf-8").splitlines()]
        paths = [data_dir / n for n in names if n and not n.startswith("#")]
    else:
        paths = sorted(data_dir.glob("*.json"))
    return paths[:limit] if limit is not None else paths


def run(data_dir, files=None, *, limit=None, timeout: float = 20.0, mode: str = "text", memory_mb: int = 4096,
        progress=None, engines=("constrain",), check_timeout: float | None = None) -> list[SchemaResult]:
    """Run every selected schema in each engine's worker process, the engines taking turns schema
    by schema (the first to go rotating), so that the machine's drift over a run reaches each alike;
    ``progress(i, n, result)`` after each."""
    paths = schema_files(data_dir, files, limit)
    if mode == "tokens" and "fork" in multiprocessing.get_all_start_methods():
        Tokens.preload()
    workers = {name: Worker(memory_mb) for name in engines}
    unusable: dict[str, SchemaResult] = {}  # an engine that could not start: every schema fails alike
    results = []
    try:
        for i, path in enumerate(paths):
            for k in range(len(engines)):
                engine = engines[(i + k) % len(engines)]
                if engine not in unusable:
                    result = run_schema(workers[engine], path, mode, timeout, engine, check_timeout)
                    if result.message and result.message.startswith(("setting up", "worker took too long loading")):
                        unusable[engine] = result
                else:
                    failed = unusable[engine]
                    result = SchemaResult(path.name, "crash", engine, error=failed.error, message=failed.message)
                results.append(result)
                if progress:
                    progress(i + 1, len(paths), result)
    finally:
        for worker in workers.values():
            worker.close()
    return results


# -- reporting ----------------------------------------------------------------------------------
def percentile(values, q: float) -> float:
    """Nearest-rank percentile."""
    if not len(values):
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def percentiles(values, qs=PERCENTILES) -> dict[str, float]:
    """Nearest-rank percentiles of a large sample, sorted once (numpy)."""
    import numpy as np

    ordered = np.sort(np.asarray(values, dtype=np.float64))
    if not len(ordered):
        return {f"p{q:g}": math.nan for q in qs}
    return {f"p{q:g}": float(ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]) for q in qs}


def source_of(name: str) -> str:
    return name.split("---")[0] if "---" in name else name.rsplit("_", 1)[0]


def summarise(results: list[SchemaResult]) -> dict:
    counts = Counter(r.outcome for r in results)
    times = [r.compile_ms for r in results if r.outcome not in ("timeout", "crash", "compile_error") and r.compile_ms is not None]
    return {
        "schemas": len(results),
        "outcomes": {o: counts[o] for o in OUTCOMES},
        "traps": sum(1 for r in results if r.trap),
        "invalid_accepted": sum(1 for r in results for f in r.failures if not f["valid"]),
        "valid_refused": sum(1 for r in results for f in r.failures if f["valid"]),
        "valid_refused_shape": sum(1 for r in results for f in r.failures if f["valid"] and f.get("shape")),
        "validation_errors_shape_only": sum(1 for r in results if r.outcome == "validation_error"
                                            and all(f.get("shape") for f in r.failures)),
        "maskbench_prefix_invalidations": sum(len(r.prefix_accepts) for r in results),
        "tests": sum(r.tests for r in results),
        "compile_ms": {f"p{q}": percentile(times, q) for q in (50, 90, 99)} | {"max": max(times, default=math.nan)},
    }


def print_report(results: list[SchemaResult], out=sys.stdout) -> dict:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    s = summarise(results)
    n = max(1, s["schemas"])
    p(f"\n== MaskBench text mode: {s['schemas']} schemas, {s['tests']} test instances "
      f"(whitespace flexible, property order {compile_options()['property_order']}; "
      f"a text must be accepted complete) ==")
    for o in OUTCOMES:
        p(f"  {o.replace('_', ' '):<20} {s['outcomes'][o]:>6}  {100 * s['outcomes'][o] / n:6.2f}%")
    p(f"  traps (find_trap({TRAP_BUDGET}))  {s['traps']:>6}")
    p(f"  validation errors from key order only (accepted with keys reordered): {s['validation_errors_shape_only']}")
    p(f"  instances: {s['valid_refused']} valid refused ({s['valid_refused_shape']} key order only), "
      f"{s['invalid_accepted']} invalid accepted; "
      f"{s['maskbench_prefix_invalidations']} invalid refused only at the end (would be invalidation errors "
      f"under MaskBench's no-EOS-check protocol)")
    c = s["compile_ms"]
    p(f"  compile ms (compile + first byte row, compiled schemas): p50 {c['p50']:.1f}  p90 {c['p90']:.1f}  "
      f"p99 {c['p99']:.1f}  max {c['max']:.1f}")

    p("")
    _print_compile_errors(p, results, 15, "  ")
    crashes: dict[tuple, list[str]] = defaultdict(list)
    for r in results:
        if r.outcome == "crash":
            crashes[(r.error, _message_key(r.message), r.where)].append(r.file)
    if crashes:
        p(f"\n-- crashes: {s['outcomes']['crash']}")
        for (error, message, where), files in sorted(crashes.items(), key=lambda kv: -len(kv[1])):
            p(f"  {len(files):>5}  {error}: {_short(message, 200)} [{where}] e.g. {', '.join(files[:3])}")
    timeouts = [r for r in results if r.outcome == "timeout"]
    if timeouts:
        p(f"\n-- time-outs: {len(timeouts)}")
        for r in timeouts:
            p(f"  {r.file}: {r.message}")
    inval = [(r, f) for r in results for f in r.failures if not f["valid"]]
    if inval:
        p(f"\n-- INVALIDATION ERRORS (invalid instance accepted): {len(inval)}")
        for r, f in inval:
            p(f"  {r.file} #{f['index']}: {f['text']}")
    valid = [(r, f) for r in results for f in r.failures if f["valid"]]
    if valid:
        p(f"\n-- validation errors (valid instance refused): {len(valid)} in {s['outcomes']['validation_error']} schemas")
        for r, f in valid:
            p(f"  {r.file} #{f['index']} refused at byte {f['dies_at']} (at ▮): ...{f['context']!r}"
              + ("  [key order only]" if f.get("shape") else ""))
    traps = [r for r in results if r.trap]
    if traps:
        p(f"\n-- traps: {len(traps)}")
        for r in traps:
            p(f"  {r.file}: state {r.trap['state']} after {r.trap['path']!r}")
    slow = sorted((r for r in results if r.compile_ms is not None), key=lambda r: -r.compile_ms)[:10]
    if slow:
        p("\n-- slowest compiles: ")
        for r in slow:
            p(f"  {r.compile_ms:9.1f} ms  {r.file} ({r.outcome}{', ' + r.error if r.error else ''})")
    slow = sorted((r for r in results if r.check_ms is not None), key=lambda r: -r.check_ms)[:5]
    if slow and slow[0].check_ms > 1000:
        p("-- slowest checks (instance walks + find_trap): "
          + "; ".join(f"{r.check_ms:.0f} ms {r.file}" for r in slow))
    by_source: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        by_source[source_of(r.file)][r.outcome] += 1
    p("\n-- outcomes by source:")
    p(f"  {'source':<22}" + "".join(f"{o[:10]:>11}" for o in OUTCOMES))
    for src in sorted(by_source):
        p(f"  {src:<22}" + "".join(f"{by_source[src][o]:>11}" for o in OUTCOMES))
    o = s["outcomes"]
    p(f"\nmaskbench: {s['schemas']} schemas: {o['passing']} passing ({100 * o['passing'] / n:.1f}%), "
      f"{o['compile_error']} compile errors ({100 * o['compile_error'] / n:.1f}%), "
      f"{o['validation_error']} validation errors ({100 * o['validation_error'] / n:.1f}%; "
      f"{s['validation_errors_shape_only']} key order only), "
      f"{o['invalidation_error']} invalidation errors ({100 * o['invalidation_error'] / n:.1f}%), "
      f"{o['timeout']} time-outs, {o['crash']} crashes, {s['traps']} traps; "
      f"compile p50 {c['p50']:.1f} ms, p99 {c['p99']:.1f} ms")
    return s


def _print_compile_errors(p, results, top: int, indent: str) -> None:
    """Compile errors by class, UnsupportedKeyword by keyword, then the most common messages."""
    errors = [r for r in results if r.outcome == "compile_error"]
    if not errors:
        return
    p("-- compile errors by class: " + ", ".join(f"{k} {v}" for k, v in Counter(r.error for r in errors).most_common()))
    kw = Counter(r.keyword for r in errors if r.error == "UnsupportedKeyword")
    if kw:
        p("-- UnsupportedKeyword by keyword: " + ", ".join(f"{k} {v}" for k, v in kw.most_common()))
    p(f"-- top {top} compile-error messages (pointers stripped):")
    for msg, k in Counter(_message_key(r.message) for r in errors).most_common(top):
        p(f"{indent}{k:>5}  {_short(msg, 150)}")


def _message_key(message: str | None) -> str:
    """A compile-error message with its location cut off, so that equal reasons group together."""
    text = (message or "").split("\n")[0]
    for cut in (" at the schema root", " at /"):
        if cut in text:
            text = text.split(cut)[0]
    return text


def summarise_tokens(results: list[SchemaResult], version: str = "") -> dict:
    """One engine's token-mode figures: outcomes under both protocols, TTFM (ms) and TBM (µs)."""
    counts = Counter(r.outcome for r in results)
    strict = Counter(r.strict_outcome or r.outcome for r in results)
    ttfm = [r.compile_ms for r in results if r.compiled]
    tbm = array("q")
    for r in results:
        tbm.extend(r.tbm_ns)
    return {
        "engine": results[0].engine if results else "?",
        "version": version,
        "schemas": len(results),
        "tests": sum(r.tests for r in results),
        "outcomes": {o: counts[o] for o in OUTCOMES},
        "strict_outcomes": {o: strict[o] for o in OUTCOMES},
        "invalid_accepted": sum(1 for r in results for f in r.failures if not f["valid"]),
        "invalid_accepted_maskbench_only": sum(len(r.prefix_accepts) for r in results),
        "valid_refused": sum(1 for r in results for f in r.failures if f["valid"]),
        "valid_refused_shape": sum(1 for r in results for f in r.failures if f["valid"] and f.get("shape")),
        "valid_eos_refused": sum(len(r.end_failures) for r in results),
        "mismatches": sum(len(r.mismatches) for r in results),
        "skipped": sum(r.skipped for r in results),
        "ttfm_ms": percentiles(ttfm) | {"max": max(ttfm, default=math.nan), "n": len(ttfm)},
        "tbm_us": {k: v / 1000 for k, v in percentiles(tbm).items()} | {"max": max(tbm, default=0) / 1000,
                                                                        "n": len(tbm)},
    }


def _cell(value: float) -> str:
    if value != value:  # nan
        return "-"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _print_ttfm_beside(by_engine: dict[str, list[SchemaResult]], p) -> None:
    """Each peer's TTFM beside constrain's over the schemas both compiled (each engine's own
    percentiles above are over different sets), with the per-schema median of the ratio."""
    ours = {r.file: r.compile_ms for r in by_engine.get("constrain", ()) if r.compiled}
    for name, results in by_engine.items():
        both = [(ours[r.file], r.compile_ms) for r in results if name != "constrain" and r.compiled and r.file in ours]
        if both:
            p(f"TTFM ms on the {len(both)} schemas constrain and {name} both compiled: p50 / p90 / p99 "
              + " / ".join(_cell(percentile([a for a, _ in both], q)) for q in (50, 90, 99)) + " against "
              + " / ".join(_cell(percentile([b for _, b in both], q)) for q in (50, 90, 99))
              + f"; constrain/{name} per schema: median {percentile([a / b for a, b in both], 50):.3f}")


def print_token_report(by_engine: dict[str, list[SchemaResult]], versions: dict[str, str], out=sys.stdout) -> dict:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    summaries = {name: summarise_tokens(results, versions.get(name, "")) for name, results in by_engine.items()}
    schemas = max(s["schemas"] for s in summaries.values())
    p(f"\n== MaskBench token protocol: {schemas} schemas, Llama 3 "
      f"tokenizer (llama.cpp llama-bpe, 128256 ids, EOS <|eot_id|>); one engine at a time, single-threaded; "
      f"constrain's property order {compile_options()['property_order']} ==")
    p("Outcomes under MaskBench's protocol: a valid instance passes when every token is allowed, an invalid one "
      "when some token is refused (the end state is not checked).")
    p("TTFM over the schemas each engine compiled; TBM over every token each engine walked "
      "(mask + commit, perf_counter_ns).")
    head = (f"{'engine':<22}{'schemas':>8}{'passing':>8}{'compile':>8}{'valid.':>7}{'invalid.':>9}{'time-':>6}{'crash':>6} |"
            f"{'TTFM ms':>8}{'':>7}{'':>7}{'':>7} |{'TBM µs':>8}{'':>7}{'':>7}{'':>8} |{'tokens':>8}")
    sub = (f"{'':<22}{'':>8}{'':>8}{'errors':>8}{'errors':>7}{'errors':>9}{'outs':>6}{'es':>6} |"
           + "".join(f"{'p' + format(q, 'g'):>7}" for q in PERCENTILES) + " |"
           + "".join(f"{'p' + format(q, 'g'):>7}" for q in PERCENTILES) + " |")
    p(head)
    p(sub)
    for name, s in summaries.items():
        o, t, b = s["outcomes"], s["ttfm_ms"], s["tbm_us"]
        label = f"{name} {s['version']}".strip()
        p(f"{label:<22}{s['schemas']:>8}{o['passing']:>8}{o['compile_error']:>8}{o['validation_error']:>7}{o['invalidation_error']:>9}"
          f"{o['timeout']:>6}{o['crash']:>6} |" + "".join(f"{_cell(t[f'p{q:g}']):>7}" for q in PERCENTILES)
          + " |" + "".join(f"{_cell(b[f'p{q:g}']):>7}" for q in PERCENTILES) + f" |{b['n']:>8}")
    _print_ttfm_beside(by_engine, p)
    p("\nStricter protocol (what generation needs): after the last token of a valid instance the mask must allow EOS; "
      "an invalid instance whose tokens are all allowed passes only if EOS is then refused.")
    p(f"{'engine':<22}{'schemas':>8}{'passing':>8}{'valid.err':>10}{'invalid.err':>12}   instances checked: valid refused "
      f"(EOS only), invalid accepted (MaskBench only), mask/advance disagreements")
    for name, s in summaries.items():
        o = s["strict_outcomes"]
        p(f"{name:<22}{s['schemas']:>8}{o['passing']:>8}{o['validation_error']:>10}{o['invalidation_error']:>12}   "
          f"{s['tests']}: {s['valid_refused'] + s['valid_eos_refused']} ({s['valid_eos_refused']}), "
          f"{s['invalid_accepted'] + s['invalid_accepted_maskbench_only']} ({s['invalid_accepted_maskbench_only']}), "
          f"{s['mismatches']}" + (f"; {s['skipped']} instances not tokenizable" if s["skipped"] else ""))

    for name, results in by_engine.items():
        _print_engine_details(name, results, summaries[name], p, full=name == "constrain")
    return summaries


def _print_engine_details(name: str, results: list[SchemaResult], s: dict, p, full: bool) -> None:
    limit = None if full else 3  # a peer's failures are counted, with a few examples
    p(f"\n==== {name} ====")
    crashes: dict[tuple, list[str]] = defaultdict(list)
    for r in results:
        if r.outcome == "crash":
            crashes[(r.error, _message_key(r.message), r.where)].append(r.file)
    for (error, message, where), files in sorted(crashes.items(), key=lambda kv: -len(kv[1])):
        p(f"-- crashes: {len(files)} x {error}: {_short(message, 200)} [{where}] e.g. {', '.join(files[:3])}")
    timeouts = [r for r in results if r.outcome == "timeout"]
    if timeouts:
        p(f"-- time-outs: {len(timeouts)}: " + ", ".join(f"{r.file} ({r.message})" for r in timeouts[:limit]))
    _print_compile_errors(p, results, 10 if full else 3, "   ")
    mism = [(r, f) for r in results for f in r.mismatches]
    if mism:
        p(f"-- MASK/ADVANCE DISAGREEMENTS (token allowed by the mask, refused by advance): {len(mism)}")
        for r, f in mism[:limit]:
            p(f"   {r.file} #{f['index']} token {f['position']}/{f['tokens']} id {f['token']} {f['token_text']!r} "
              f"at {f['path']}: ...{f['context']!r}")
    inval = [(r, f) for r in results for f in r.failures if not f["valid"]]
    if inval:
        p(f"-- INVALIDATION ERRORS (invalid instance: every token allowed, EOS allowed at the end): {len(inval)}")
        for r, f in inval[:limit]:
            p(f"   {r.file} #{f['index']} ({f['tokens']} tokens): {f['text']}\n      why invalid: {f['why_invalid']}")
    prefix = [(r, f) for r in results for f in r.prefix_accepts]
    if prefix:
        p(f"-- invalid instances refused only at the end (EOS not allowed; MaskBench counts them as invalidation "
          f"errors): {len(prefix)}")
        for r, f in prefix[:limit if limit is not None else 20]:
            p(f"   {r.file} #{f['index']}: {_short(f['text'], 120)}\n      why invalid: {f['why_invalid']}")
    valid = [(r, f) for r in results for f in r.failures if f["valid"]]
    if valid:
        shape = sum(1 for _, f in valid if f.get("shape"))
        p(f"-- validation errors (valid instance, a token refused): {len(valid)} instances in "
          f"{s['outcomes']['validation_error']} schemas" + (f" ({shape} key order only)" if full else ""))
        for r, f in valid[:limit]:
            p(f"   {r.file} #{f['index']} token {f['position']}/{f['tokens']} id {f['token']} {f['token_text']!r} "
              f"at {f['path']}: ...{f['context']!r}" + ("  [key order only]" if f.get("shape") else ""))
    ends = [(r, f) for r in results for f in r.end_failures]
    if ends:
        p(f"-- valid instances whose tokens all pass but EOS is refused at the end (strict validation errors): {len(ends)}")
        for r, f in ends[:limit if limit is not None else 20]:
            p(f"   {r.file} #{f['index']}: {_short(f['text'], 120)}")
    if not full:
        return
    b = s["tbm_us"]
    cold = array("q")
    warm = array("q")
    for r in results:
        if len(r.cold) == len(r.tbm_ns):
            for ns, c in zip(r.tbm_ns, r.cold):
                (cold if c else warm).append(ns)
    if cold or warm:
        w, c = percentiles(warm), percentiles(cold)
        p(f"-- TBM µs, warm states (mask cached) {len(warm)} samples: "
          + "  ".join(f"{k} {_cell(v / 1000)}" for k, v in w.items())
          + f";  cold states {len(cold)} samples: " + "  ".join(f"{k} {_cell(v / 1000)}" for k, v in c.items())
          + f";  max {_cell(b['max'])}")
    slow = sorted(((f, r) for r in results for f in r.slow), key=lambda x: -x[0]["ns"])[:SLOW_KEEP]
    if slow:
        p(f"-- the {len(slow)} slowest TBM samples (mask + advance):")
        for f, r in slow:
            where = (f" state {f['state']} ({'cold' if f['cold'] else 'warm'}, {f.get('configs', '?')} configs, "
                     f"{f['allowed']} tokens allowed; {f.get('states', '?')} states reached)" if "state" in f else "")
            p(f"   {f['ns'] / 1e6:8.1f} ms = mask {f['mask_ns'] / 1e6:.1f} + advance {f['advance_ns'] / 1e6:.1f}  "
              f"{r.file} #{f['index']} token {f['position']} {f['token_text']!r} at {f['path']}{where}\n"
              f"        ...{f['context']!r}")
    slow_ttfm = sorted((r for r in results if r.compiled), key=lambda r: -r.compile_ms)[:SLOW_KEEP]
    if slow_ttfm:
        p(f"-- the {len(slow_ttfm)} slowest TTFM (compile + Matcher/token index + first mask):")
        for r in slow_ttfm:
            d = r.compile_details
            parts = " + ".join(f"{k} {d[k] / 1e6:.0f}" for k in ("compile", "matcher", "first_mask") if k in d)
            p(f"   {r.compile_ms:8.0f} ms = {parts}  {r.file} ({r.outcome}) features: {_features(r.file)}")


def write_plots(by_engine: dict[str, list[SchemaResult]], folder: Path, title: str) -> list[Path]:
    """``ttfm.png`` and ``tbm.png`` in ``folder``: each measure's CDF, one line per engine, on a log
    scale of milliseconds (the table's percentiles are points of these curves)."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    import numpy as np

    def tbm_ms(results):
        return np.concatenate([np.frombuffer(r.tbm_ns, dtype=np.int64) for r in results]) / 1e6

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, label, values in (("ttfm", "time to first mask", lambda rs: [r.compile_ms for r in rs if r.compiled]),
                                ("tbm", "time between masks", tbm_ms)):
        fig, ax = plt.subplots(figsize=(8, 5))
        for engine, results in by_engine.items():
            ms = np.sort(np.asarray(values(results), dtype=float))
            if len(ms):
                ax.plot(ms, np.arange(1, len(ms) + 1) / len(ms), label=f"{engine} ({len(ms)})")
        ax.set(xscale="log", xlabel="ms (log scale)", ylabel="fraction at or below",
               title=f"{label} (MaskBench {title})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written


_DATA_DIR: Path | None = None  # where the report reads a schema file's features from


def _features(name: str) -> str:
    try:
        meta = json.loads((_DATA_DIR / name).read_text(encoding="utf-8")).get("meta") or {}
    except (OSError, ValueError, TypeError):
        return "?"
    return ", ".join(meta.get("features") or []) or "-"


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _result_json(r: SchemaResult) -> dict:
    """A schema's result for ``--json``, without the raw TBM samples."""
    return {k: v for k, v in asdict(r).items() if k not in ("tbm_ns", "cold")}


def main(argv=None) -> int:
    global _DATA_DIR
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--text", metavar="DATA_DIR", help="byte mode: walk each instance's text through the automaton")
    mode.add_argument("--tokens", metavar="DATA_DIR", help="token mode: MaskBench's protocol with the Llama 3 tokenizer")
    engines = ap.add_mutually_exclusive_group()
    engines.add_argument("--peers", action="store_true",
                         help="token mode: also run llguidance, XGrammar and outlines-core (those installed)")
    engines.add_argument("--engines", metavar="NAMES",
                         help=f"token mode: comma-separated engines to run, of {', '.join(TOKEN_ENGINES)}")
    ap.add_argument("--files", metavar="LIST", help="file of schema file names to run, one per line")
    ap.add_argument("--limit", type=int, help="run only the first N files")
    ap.add_argument("--property-order", choices=("schema", "any"), default="schema",
                    help="constrain's property_order: 'any' accepts the named properties of objects of up to "
                         f"{LAZY_ORDER_MAX} of them in any order (default: the schema's order, our canonical shape)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds allowed for a compile (default 20)")
    ap.add_argument("--check-timeout", type=float,
                    help="seconds allowed for one schema's instances (default: --timeout in text mode, 60 in token mode)")
    ap.add_argument("--memory-mb", type=int, default=4096,
                    help="memory a worker may map beyond its loaded engine (0: no limit)")
    ap.add_argument("--json", metavar="OUT", help="write the summary and every schema's result as JSON")
    ap.add_argument("--plot", metavar="DIR", help="token mode: write the TTFM and TBM CDFs per engine as PNGs in DIR")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    os.environ["MASKBENCH_PROPERTY_ORDER"] = args.property_order
    token_mode = args.tokens is not None
    if (args.peers or args.engines or args.plot) and not token_mode:
        ap.error("--peers, --engines and --plot go with --tokens")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        ap.error("--plot needs matplotlib: pip install matplotlib")

    started = time.perf_counter()

    collected: dict[str, list[SchemaResult]] = defaultdict(list)

    def progress(i, n, r):
        collected[r.engine].append(r)
        if r.outcome in ("timeout", "crash") and (len(collected[r.engine]) < 2
                                                  or collected[r.engine][-2].message != r.message):
            print(f"[{r.engine} {i}/{n}] {r.file}: {r.outcome} {_short(r.message or '', 150)}", file=sys.stderr, flush=True)
        elif not args.quiet and (i % 50 == 0 or i == n):
            print(f"[{r.engine} {i}/{n}] {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    if not token_mode:
        results = run(args.text, args.files, limit=args.limit, timeout=args.timeout, mode="text",
                      memory_mb=args.memory_mb, progress=progress, check_timeout=args.check_timeout)
        summary = print_report(results)
        print(f"(wall {time.perf_counter() - started:.0f} s)")
        if args.json:
            Path(args.json).write_text(json.dumps({"mode": "text", "summary": summary,
                                                   "results": [_result_json(r) for r in results]},
                                                  ensure_ascii=False, indent=1), encoding="utf-8")
        return 1 if summary["outcomes"]["invalidation_error"] or summary["traps"] else 0

    _DATA_DIR = Path(args.tokens)
    names = ["constrain", *PEERS] if args.peers else (args.engines or "constrain").split(",")
    unknown = [n for n in names if n not in TOKEN_ENGINES]
    if unknown:
        ap.error(f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(TOKEN_ENGINES)}")
    versions = {n: engine_version(n) for n in names}
    missing = [n for n in names if versions[n] is None]
    for n in missing:
        print(f"{n} is not installed: skipped (pip install {TOKEN_ENGINES[n].package.replace('_', '-')})",
              file=sys.stderr)
    check_timeout = 60.0 if args.check_timeout is None else args.check_timeout
    interrupted = False
    signal.signal(signal.SIGTERM, _interrupt)  # `timeout` or kill: report what was measured
    try:
        run(args.tokens, args.files, limit=args.limit, timeout=args.timeout, mode="tokens", memory_mb=args.memory_mb,
            progress=progress, engines=[n for n in names if versions[n] is not None], check_timeout=check_timeout)
    except KeyboardInterrupt:
        interrupted = True
    by_engine = {n: collected[n] for n in names if collected[n]}
    if not by_engine:
        print("interrupted before any schema was measured")
        return 2
    summaries = print_token_report(by_engine, versions)
    if args.plot:
        run_of = f"{_DATA_DIR.name}, {Path(args.files).name if args.files else 'every file'}" + (
            f", first {args.limit}" if args.limit else "")
        for path in write_plots(by_engine, Path(args.plot), run_of):
            print(f"wrote {path}")
    if interrupted:
        print("\nINTERRUPTED after " + ", ".join(f"{n} {len(collected[n])}" for n in by_engine) + " schemas")
    if missing:
        print(f"\nnot installed, not run: {', '.join(missing)}")
    print(f"(wall {time.perf_counter() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"mode": "tokens", "engines": {n: {"summary": summaries[n],
                                               "results": [_result_json(r) for r in by_engine[n]]}
                         for n in by_engine}},
            ensure_ascii=False, indent=1), encoding="utf-8")
    ours = summaries.get("constrain")
    return 1 if ours and (ours["strict_outcomes"]["invalidation_error"] or ours["mismatches"]) else 0


if __name__ == "__main__":
    sys.exit(main())
