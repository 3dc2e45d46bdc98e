"""Tokens against a state that loops on itself: the interior of a ``pattern`` string such as
``^[\\w.:-]+$``.

When every byte of a class C leads from a state back to itself, a token made only of C bytes is
allowed there outright, and any other token reaches its first byte outside C still in that state,
so only the rest of it needs a walk, and only when the state reads that byte at all. Per vocabulary
and class, one vectorised pass finds, for every token, whether it lies in C and where it leaves C.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

WIDTH = 32  # bytes of each token looked at in the vectorised pass; longer tokens walk past it
PAD = 256  # the filler after a token's last byte, counted as inside every class


class LoopSplit(NamedTuple):
    """Tokens inside a class, and for the others: where they leave it and the byte there."""

    inside: np.ndarray
    out_ids: np.ndarray
    out_at: np.ndarray
    out_byte: np.ndarray


class LoopTokens:
    """One vocabulary's tokens as a padded byte matrix, and the splits of the classes asked for."""

    def __init__(self, token_bytes, cache_size: int = 32):
        self.token_bytes = token_bytes
        n = len(token_bytes)
        self.lengths = np.array([len(d) if d else 0 for d in token_bytes], dtype=np.int64)
        flat = bytearray(n * WIDTH)
        for t, data in enumerate(token_bytes):
            if data:
                head = data[:WIDTH]
                flat[t * WIDTH: t * WIDTH + len(head)] = head
        matrix = np.frombuffer(bytes(flat), dtype=np.uint8).reshape(n, WIDTH).astype(np.uint16)
        matrix[np.arange(WIDTH)[None, :] >= self.lengths[:, None]] = PAD
        self.matrix = matrix
        self._splits: OrderedDict[bytes, LoopSplit] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def split(self, loop: np.ndarray) -> LoopSplit:
        """The split for the class ``loop`` (a bool array over the 256 bytes)."""
        key = np.packbits(loop).tobytes()
        with self._lock:
            found = self._splits.get(key)
            if found is not None:
                self._splits.move_to_end(key)
                return found
        table = np.append(loop, True)
        ok = table[self.matrix]
        whole = ok.all(axis=1)
        real = self.lengths > 0
        inside = np.flatnonzero(real & whole & (self.lengths <= WIDTH))
        out_ids = np.flatnonzero(real & ~(whole & (self.lengths <= WIDTH)))
        out_at = np.where(whole[out_ids], WIDTH, ok[out_ids].argmin(axis=1))
        # the byte where each leaves the class, from the matrix; past it (a long token inside the
        # class for all of its first WIDTH bytes) from the token itself
        out_byte = self.matrix[out_ids, np.minimum(out_at, WIDTH - 1)].astype(np.int64)
        for k in np.flatnonzero(out_at == WIDTH).tolist():
            out_byte[k] = self.token_bytes[int(out_ids[k])][WIDTH]
        found = LoopSplit(inside, out_ids, out_at, out_byte)
        with self._lock:
            self._splits[key] = found
            while len(self._splits) > self._cache_size:
                self._splits.popitem(last=False)
        return found
