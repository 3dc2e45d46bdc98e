"""Ready score vectors per automaton state: 0 where a token may come next, -inf elsewhere.

A warm token then costs one addition of a ready vector to the scores. Measured on a 2-core CPU
with SmolLM2's 49,152 tokens: adding a float32 vector in place ~8 µs; a boolean-mask assignment
~250 µs; ``full_like`` plus a fancy-index copy ~220 µs. Every processor keeps its vectors here,
per index, state (``TokenIndex.shared_state``: counts far from a bound share one) and logits width (and device and dtype for torch), in one bounded LRU per kind
shared by every processor of the process (a processor per request finds its vectors ready), so a
model's padded vocabulary (logits wider than the tokenizer) is masked too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

EOS_ONLY = -1  # the key of a finished or wedged sequence's vector


def numpy_bias(mask: np.ndarray, width: int, dtype=np.float32) -> np.ndarray:
    """A read-only 0/-inf vector of ``width`` entries from a bool ``mask`` (ids past it refused)."""
    out = np.full(width, -np.inf, dtype=dtype)
    n = min(width, mask.shape[0])
    out[:n][mask[:n]] = 0
    out.flags.writeable = False
    return out


def torch_bias(mask: np.ndarray, width: int, device, dtype):
    """``numpy_bias`` as a tensor on ``device`` (torch is imported only by the processors that use it)."""
    import torch

    return torch.from_numpy(numpy_bias(mask, width).copy()).to(device=device, dtype=dtype)


class Biases:
    """``get(matcher, width, *extra)``: the vector for the matcher's next step, built by
    ``build(mask, width, *extra)`` the first time and kept (at most ``max_bytes`` together)."""

    def __init__(self, build, max_bytes: int = 256 << 20):
        self.build = build
        self.max_bytes = max_bytes
        self._used = 0
        self._kept: OrderedDict[tuple, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, matcher, width: int, *extra):
        key = _key(matcher, width, extra)
        kept = self._kept.get(key)
        if kept is not None:
            try:
                self._kept.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile
                pass
            return kept[0]
        mask = matcher.mask()  # may wedge the matcher (an automaton limit): key it again
        key = _key(matcher, width, extra)
        vec = self.build(mask, width, *extra)
        size = vec.nbytes
        with self._lock:
            if key not in self._kept:
                self._kept[key] = (vec, size)
                self._used += size
            while self._used > self.max_bytes and len(self._kept) > 1:
                self._used -= self._kept.popitem(last=False)[1][1]
        return vec


def _key(matcher, width: int, extra: tuple) -> tuple:
    state = matcher.mask_state()
    return (matcher.index.serial, EOS_ONLY if state is None else state, width, *extra)


NUMPY = Biases(numpy_bias)  # llama-cpp-python's processors
TORCH = Biases(torch_bias)  # transformers' and vLLM's
