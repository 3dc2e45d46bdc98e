"""Token masks per automaton state: computed lazily, cached, shared by every matcher of a grammar.

Computing a mask never walks the whole vocabulary token by token. Tokens are put in a byte trie;
a walk from the state prunes a whole subtree the moment the automaton refuses its prefix, so a
state that expects ``{`` costs a few hundred steps. The states where almost everything is allowed
are free-string states: there every *content* token (complete UTF-8, no quote, backslash or control
byte) is admissible at once when the state loops on every content scalar, which is checked once
per state; only the few thousand other tokens are walked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .dfa import DEAD, LazyDFA

_UTF8_LEAD = [(0xC2, 0xDF, 1), (0xE0, 0xEF, 2), (0xF0, 0xF4, 3)]


class _Trie:
    """A byte trie over the vocabulary in flat lists (node 0 is the root)."""

    def __init__(self, tokens: list[tuple[int, bytes]]):
        self.children: list[list[tuple[int, int]]] = [[]]
        self.ends: list[list[int]] = [[]]
        child_maps: list[dict[int, int]] = [{}]
        for tid, data in tokens:
            node = 0
            for b in data:
                nxt = child_maps[node].get(b)
                if nxt is None:
                    nxt = len(self.children)
                    child_maps[node][b] = nxt
                    self.children.append([])
                    self.ends.append([])
                    child_maps.append({})
                    self.children[node].append((b, nxt))
                node = nxt
            self.ends[node].append(tid)
        for row in self.children:
            row.sort()

    def walk(self, dfa: LazyDFA, state: int, out: list[int]) -> None:
        """Append every token id whose bytes the automaton accepts from ``state``."""
        children, ends = self.children, self.ends
        rows = dfa._rows
        stack = [(0, state)]
        while stack:
            node, s = stack.pop()
            row = rows[s]
            if row is None:
                row = dfa.row(s)
            for b, child in children[node]:
                t = row[b]
                if t == DEAD:
                    continue
                if ends[child]:
                    out.extend(ends[child])
                if children[child]:
                    stack.append((child, t))


def _is_content(data: bytes) -> bool:
    """Complete UTF-8 with no quote, backslash or control character: plain string content."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(text) and not any(ch in '"\\' or ord(ch) < 0x20 for ch in text)


class TokenIndex:
    """Masks for one grammar and one vocabulary; thread-safe, with a bounded cache."""

    def __init__(self, grammar, vocab, max_cache_bytes: int = 256 << 20):
        self.grammar = grammar
        self.vocab = vocab
        self.dfa: LazyDFA = grammar.automaton
        self.size = vocab.size
        self.eos = np.array(sorted(vocab.eos_ids), dtype=np.int64)
        content, other = [], []
        for tid, data in enumerate(vocab.token_bytes):
            if data:
                (content if _is_content(data) else other).append((tid, data))
        self.content_ids = np.array([t for t, _ in content], dtype=np.int64)
        self._all = _Trie(content + other)
        self._other = _Trie(other)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._max_entries = max(16, max_cache_bytes // max(1, self.size))
        self._loops: dict[int, bool] = {}
        self._lock = threading.Lock()
        self.eos_only = np.zeros(self.size, dtype=bool)
        self.eos_only[self.eos] = True

    def allowed_ids(self, state: int) -> list[int]:
        """Token ids (not EOS) admissible from ``state``, as a list (unsorted)."""
        out: list[int] = []
        if self.loops_on_content(state):
            self._other.walk(self.dfa, state, out)
            out.extend(self.content_ids.tolist())
        else:
            self._all.walk(self.dfa, state, out)
        return out

    def mask(self, state: int) -> np.ndarray:
        """A read-only bool array over the vocabulary: True where a token may come next."""
        m = self._cache.get(state)
        if m is not None:
            return m
        m = np.zeros(self.size, dtype=bool)
        ids = self.allowed_ids(state)
        if ids:
            m[np.array(ids, dtype=np.int64)] = True
        if self.dfa.is_accepting(state):
            m[self.eos] = True
        m.flags.writeable = False
        with self._lock:
            self._cache[state] = m
            while len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
        return m

    def loops_on_content(self, state: int) -> bool:
        """Every content scalar, raw, leads from ``state`` back to ``state`` (a free-string state)."""
        known = self._loops.get(state)
        if known is not None:
            return known
        dfa = self.dfa
        row = dfa.row(state)
        ok = all(row[b] == state for b in range(0x20, 0x80) if b not in (0x22, 0x5C))
        if ok:
            ok = self._utf8_loops(state)
        self._loops[state] = ok
        return ok

    def _utf8_loops(self, state: int) -> bool:
        """Multi-byte scalars: explore (automaton state, bytes still owed) pairs from ``state``."""
        seen = set()
        todo = []
        row = self.dfa.row(state)
        for lo, hi, owed in _UTF8_LEAD:
            for b in range(lo, hi + 1):
                t = row[b]
                if t == DEAD:
                    return False
                todo.append((t, owed, b))
        while todo:
            s, owed, lead = todo.pop()
            key = (s, owed, lead if owed == _owed_of(lead) else 0)
            if key in seen:
                continue
            seen.add(key)
            lo, hi = _continuation_range(lead, owed)
            srow = self.dfa.row(s)
            for b in range(lo, hi + 1):
                t = srow[b]
                if owed == 1:
                    if t != state:
                        return False
                elif t == DEAD:
                    return False
                else:
                    todo.append((t, owed - 1, 0))
        return True


def _owed_of(lead: int) -> int:
    for lo, hi, owed in _UTF8_LEAD:
        if lo <= lead <= hi:
            return owed
    return 0


def _continuation_range(lead: int, owed: int) -> tuple[int, int]:
    """The valid second byte depends on the lead (no overlongs, no surrogates, nothing past U+10FFFF)."""
    if owed == _owed_of(lead) and lead:
        if lead == 0xE0:
            return 0xA0, 0xBF
        if lead == 0xED:
            return 0x80, 0x9F
        if lead == 0xF0:
            return 0x90, 0xBF
        if lead == 0xF4:
            return 0x80, 0x8F
    return 0x80, 0xBF


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
