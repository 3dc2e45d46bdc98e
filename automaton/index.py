"""Token masks per automaton state: computed lazily, cached, shared by every matcher of a grammar.

The vocabulary is a byte trie, stored two ways (built once per vocabulary and shared):
- as nested lists, walked in Python with pruning: a state that admits few first bytes (``{``, a
  digit, the next letter of a key) touches a few hundred nodes and costs microseconds;
- as one array per depth (each node's parent and byte), walked with numpy: the successor states of
  a whole level of the trie are one gather from the automaton's transition table, so a state that
  admits most of the vocabulary (inside a string, a key, a free value) costs a few milliseconds
  instead of a Python step per node.
The choice is made per state from how many tokens start with an admissible byte.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .dfa import DEAD, LazyDFA

SMALL_WALK = 4000  # tokens under the admissible first bytes, below which the Python walk is faster


class VocabTrie:
    """The vocabulary's byte trie, as nested lists and as per-depth arrays."""

    def __init__(self, token_bytes):
        self.children: list[list[tuple[int, int]]] = [[]]
        self.ends: list[list[int]] = [[]]
        maps: list[dict[int, int]] = [{}]
        depth_of: list[int] = [0]
        index_in_level: list[int] = [0]
        parents: list[list[int]] = [[]]
        bytes_at: list[list[int]] = [[]]
        for tid, data in enumerate(token_bytes):
            if not data:
                continue
            node = 0
            for b in data:
                nxt = maps[node].get(b)
                if nxt is None:
                    nxt = len(self.children)
                    maps[node][b] = nxt
                    self.children.append([])
                    self.ends.append([])
                    maps.append({})
                    d = depth_of[node] + 1
                    depth_of.append(d)
                    if d == len(parents):
                        parents.append([])
                        bytes_at.append([])
                    index_in_level.append(len(parents[d]))
                    parents[d].append(index_in_level[node])
                    bytes_at[d].append(b)
                    self.children[node].append((b, nxt))
                node = nxt
            self.ends[node].append(tid)
        self.parent = [np.array(p, dtype=np.int32) for p in parents]
        self.byte = [np.array(b, dtype=np.int64) for b in bytes_at]
        end_nodes: list[list[int]] = [[] for _ in parents]
        end_ids: list[list[int]] = [[] for _ in parents]
        for node, tids in enumerate(self.ends):
            for tid in tids:
                end_nodes[depth_of[node]].append(index_in_level[node])
                end_ids[depth_of[node]].append(tid)
        self.end_nodes = [np.array(x, dtype=np.int32) for x in end_nodes]
        self.end_ids = [np.array(x, dtype=np.int64) for x in end_ids]
        self.subtree = [len(e) for e in self.ends]  # tokens at or below each node
        for node in range(len(self.children) - 1, -1, -1):
            for _, child in self.children[node]:
                self.subtree[node] += self.subtree[child]

    def walk(self, dfa: LazyDFA, state: int) -> np.ndarray:
        """Token ids whose bytes the automaton accepts from ``state``, by the cheaper of the two walks."""
        if self._expected(dfa, state) <= SMALL_WALK:
            return np.array(self._walk_small(dfa, state), dtype=np.int64)
        return self._walk_levels(dfa, state)

    def _expected(self, dfa: LazyDFA, state: int) -> int:
        """How many tokens survive the first two bytes (an upper bound on the small walk's work)."""
        row = dfa.row(state)
        firsts = [(b, child) for b, child in self.children[0] if row[b] != DEAD]
        total = sum(self.subtree[child] for _, child in firsts)
        if total <= SMALL_WALK or len(firsts) > 16:  # many first bytes: a string-like state
            return total
        total = 0
        for b, child in firsts:
            total += len(self.ends[child])
            second = dfa.row(row[b])
            total += sum(self.subtree[c] for b2, c in self.children[child] if second[b2] != DEAD)
        return total

    def _walk_small(self, dfa: LazyDFA, state: int) -> list[int]:
        children, ends = self.children, self.ends
        out: list[int] = []
        stack = [(0, state)]
        while stack:
            node, s = stack.pop()
            row = dfa.row(s)
            for b, child in children[node]:
                t = row[b]
                if t == DEAD:
                    continue
                if ends[child]:
                    out.extend(ends[child])
                if children[child]:
                    stack.append((child, t))
        return out

    def _walk_levels(self, dfa: LazyDFA, state: int) -> np.ndarray:
        """Level by level, every node's state is one gather from the shifted table (0 = dead)."""
        states = np.array([state + 1], dtype=np.int32)
        found = []
        for d in range(1, len(self.parent)):
            parents = states[self.parent[d]]
            if not parents.any():
                break
            flat = dfa.shifted_table(parents)
            states = flat[parents.astype(np.int64) * 256 + self.byte[d]]
            ends = self.end_nodes[d]
            if len(ends):
                found.append(self.end_ids[d][states[ends] > 0])
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


_TRIES: dict[str, VocabTrie] = {}
_TRIES_LOCK = threading.Lock()


def vocab_trie(vocab) -> VocabTrie:
    """The trie of a vocabulary, built once per vocabulary (a few seconds for 128k tokens)."""
    key = vocab.fingerprint()
    with _TRIES_LOCK:
        trie = _TRIES.get(key)
        if trie is None:
            if len(_TRIES) >= 8:
                _TRIES.pop(next(iter(_TRIES)))
            trie = _TRIES[key] = VocabTrie(vocab.token_bytes)
    return trie


class TokenIndex:
    """Masks for one grammar and one vocabulary; thread-safe, with a bounded cache."""

    def __init__(self, grammar, vocab, max_cache_bytes: int = 256 << 20):
        self.grammar = grammar
        self.vocab = vocab
        self.dfa: LazyDFA = grammar.automaton
        self.size = vocab.size
        self.eos = np.array(sorted(vocab.eos_ids), dtype=np.int64)
        self.trie = vocab_trie(vocab)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._max_entries = max(16, max_cache_bytes // max(1, self.size))
        self._lock = threading.Lock()
        self.eos_only = np.zeros(self.size, dtype=bool)
        self.eos_only[self.eos] = True
        self.eos_only.flags.writeable = False

    def allowed_ids(self, state: int) -> np.ndarray:
        """Token ids (EOS aside) admissible from ``state``."""
        return self.trie.walk(self.dfa, state)

    def mask(self, state: int) -> np.ndarray:
        """A read-only bool array over the vocabulary: True where a token may come next."""
        m = self._cache.get(state)
        if m is not None:
            return m
        m = np.zeros(self.size, dtype=bool)
        m[self.allowed_ids(state)] = True
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
