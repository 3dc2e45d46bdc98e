"""Tokens against a state that loops on itself: the interior of a ``pattern`` string such as
``^[\\w.:-]+$``.

When every byte of a class C leads from a state back to itself, a token made only of C bytes is
allowed there outright, and any other token reaches its first byte outside C still in that state,
so only the rest of it needs a walk, and only when the state reads that byte at all. Per vocabulary
and class, a few vectorised passes find, for every token, whether it lies in C (its set of bytes
against C, four words a token) and, for those that leave C, where: column by column, each column
looking only at the tokens not gone yet (most leave within a few bytes), not one lookup per byte of
a padded vocabulary (17 ms a class for Llama 3, now 3-6 ms).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

WIDTH = 32  # bytes of each token looked at in the vectorised pass; longer tokens walk past it


class LoopSplit(NamedTuple):
    """Tokens inside a class, and for the others: where they leave it and the byte there."""

    inside: np.ndarray
    out_ids: np.ndarray
    out_at: np.ndarray
    out_byte: np.ndarray


class LoopTokens:
    """One vocabulary's tokens as byte sets and byte columns, and the splits of the classes asked for."""

    def __init__(self, token_bytes, cache_size: int = 32):
        self.token_bytes = token_bytes
        n = len(token_bytes)
        self.lengths = np.array([len(d) if d else 0 for d in token_bytes], dtype=np.int64)
        flat = bytearray(n * WIDTH)
        for t, data in enumerate(token_bytes):
            if data:
                head = data[:WIDTH]
                flat[t * WIDTH: t * WIDTH + len(head)] = head
        matrix = np.frombuffer(bytes(flat), dtype=np.uint8).reshape(n, WIDTH)
        self.columns = np.ascontiguousarray(matrix.T)  # column j: every token's byte j, contiguous
        # per token, the set of its first WIDTH bytes (256 bits, as four words): whether a token
        # lies in a class is a few word operations, so only the tokens that leave it are looked
        # at byte by byte
        held = np.zeros((n, 256), dtype=bool)
        rows, cols = np.nonzero(np.arange(WIDTH)[None, :] < self.lengths[:, None])
        held[rows, matrix[rows, cols]] = True
        self.byte_words = np.ascontiguousarray(np.packbits(held, axis=1, bitorder="little").view(np.uint64).T)
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
        outside = (~np.packbits(loop, bitorder="little").view(np.uint64)).tolist()
        met = np.zeros(len(self.lengths), dtype=np.uint64)  # per token: its bytes outside the class
        for words, word in zip(self.byte_words, outside):
            if word:
                met |= words & np.uint64(word)
        leaves = met != 0
        long = self.lengths > WIDTH
        inside = np.flatnonzero(~leaves & (self.lengths > 0) & ~long)
        out_ids, out_at, out_byte = [], [], []
        # every token that leaves the class, and every longer token: where it leaves, column by
        # column over the ones still inside (most leave within a few bytes)
        active = np.flatnonzero(leaves | long)
        for j in range(WIDTH):
            column = self.columns[j][active]
            leaving = ~loop[column]
            out_ids.append(active[leaving])
            out_at.append(np.full(len(out_ids[-1]), j, dtype=np.int64))
            out_byte.append(column[leaving].astype(np.int64))
            active = active[~leaving]
            if not len(active):
                break
        # the rest are longer tokens inside for all of their first WIDTH bytes: walked from there
        out_ids.append(active)
        out_at.append(np.full(len(active), WIDTH, dtype=np.int64))
        out_byte.append(np.array([self.token_bytes[t][WIDTH] for t in active.tolist()], dtype=np.int64))
        found = LoopSplit(inside, np.concatenate(out_ids), np.concatenate(out_at), np.concatenate(out_byte))
        with self._lock:
            self._splits[key] = found
            while len(self._splits) > self._cache_size:
                self._splits.popitem(last=False)
        return found
