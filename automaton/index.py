"""Token masks per automaton state: computed lazily, cached, shared by every matcher of a grammar.

A mask is a walk of the vocabulary's byte trie through the automaton (``trie.py``). Inside free
strings most of that walk is foregone: when a state surely reads ``room`` bytes of any plain text
(``plain.py``), every plain token that fits is allowed outright and only the other tokens are
walked, from a smaller trie built once per vocabulary for a few sizes of room.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .dfa import LazyDFA
from .plain import PlainReach, is_plain
from .trie import TokenTrie

ROOMS = (8, 16)  # room sizes with their own trie, besides the longest plain token's


class VocabTries:
    """One vocabulary's tries: every token, and per room size the tokens that are not plain text
    of at most that many bytes; the plain tokens sorted by length."""

    def __init__(self, token_bytes):
        tokens = [(t, data) for t, data in enumerate(token_bytes) if data]
        self.full = TokenTrie(tokens)
        plain = sorted((len(data), t) for t, data in tokens if is_plain(data))
        self.plain_ids = np.array([t for _, t in plain], dtype=np.int64)
        self.plain_lens = np.array([n for n, _ in plain], dtype=np.int64)
        longest = plain[-1][0] if plain else 0
        length = {t: n for n, t in plain}
        self.rooms: list[tuple[int, TokenTrie]] = []
        for room in sorted({r for r in ROOMS if r < longest} | ({longest} if longest else set())):
            self.rooms.append((room, TokenTrie([(t, d) for t, d in tokens if not 0 < length.get(t, 0) <= room])))

    def allowed(self, dfa: LazyDFA, state: int, room: int, mask: np.ndarray) -> None:
        """Set ``mask`` where a token is allowed from ``state``, which reads ``room`` bytes of any plain text."""
        trie = self.full
        for size, smaller in self.rooms:
            if size <= room:
                trie = smaller
        if trie is not self.full:
            mask[self.plain_ids[: np.searchsorted(self.plain_lens, room, side="right")]] = True
        trie.allowed(dfa, state, mask, broad=trie is not self.full)


_TRIES: dict[str, VocabTries] = {}
_TRIES_LOCK = threading.Lock()


def vocab_tries(vocab) -> VocabTries:
    """The tries of a vocabulary, built once per vocabulary (a few seconds for 128k tokens)."""
    key = vocab.fingerprint()
    with _TRIES_LOCK:
        tries = _TRIES.get(key)
        if tries is None:
            if len(_TRIES) >= 8:
                _TRIES.pop(next(iter(_TRIES)))
            tries = _TRIES[key] = VocabTries(vocab.token_bytes)
    return tries


class TokenIndex:
    """Masks for one grammar and one vocabulary; thread-safe, with a bounded cache."""

    def __init__(self, grammar, vocab, max_cache_bytes: int = 256 << 20):
        self.grammar = grammar
        self.vocab = vocab
        self.dfa: LazyDFA = grammar.automaton
        self.size = vocab.size
        self.eos = np.array(sorted(vocab.eos_ids), dtype=np.int64)
        self.tries = vocab_tries(vocab)
        self.reach = PlainReach(self.dfa.program)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._max_entries = max(16, max_cache_bytes // max(1, self.size))
        self._lock = threading.Lock()
        self.eos_only = np.zeros(self.size, dtype=bool)
        self.eos_only[self.eos] = True
        self.eos_only.flags.writeable = False

    def room(self, state: int) -> int:
        """Bytes of any plain text that ``state`` surely reads: the most any of its configurations reads."""
        return max((self.reach(config[-1]) for config in self.dfa.configurations(state)), default=0)

    def mask(self, state: int) -> np.ndarray:
        """A read-only bool array over the vocabulary: True where a token may come next."""
        m = self._cache.get(state)
        if m is not None:
            return m
        m = np.zeros(self.size, dtype=bool)
        self.tries.allowed(self.dfa, state, self.room(state), m)
        if self.dfa.is_accepting(state):
            m[self.eos] = True
        m.flags.writeable = False
        with self._lock:
            self._cache[state] = m
            while len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
        return m


_INDEX_LOCK = threading.Lock()


def token_index(grammar, vocab) -> TokenIndex:
    """The one ``TokenIndex`` of a grammar and vocabulary, so every matcher shares its masks."""
    key = vocab.fingerprint()
    with _INDEX_LOCK:
        indexes = grammar.__dict__.setdefault("_token_indexes", {})
        index = indexes.get(key)
        if index is None:
            index = indexes[key] = TokenIndex(grammar, vocab)
    return index
