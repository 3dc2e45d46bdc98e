"""A byte trie over (a subset of) a vocabulary, walked through the automaton to find allowed tokens.

Nodes are numbered breadth first with siblings in byte order, so the children of a node form one
contiguous run of the next level. Two walks share the structure:
- a Python walk over nested lists, with pruning: a state that admits few first bytes (``{``, a
  digit, the next letter of a key) touches a few hundred nodes and costs microseconds;
- a numpy walk over the live frontier, level by level: the successor states of every live node of a
  level are one gather from the automaton's flat table (``LazyDFA.slots``: ids shifted by one, so 0
  is dead), and the walk hands over to Python once the frontier's subtrees hold few tokens. A
  state that admits most of the vocabulary costs a few numpy calls per level instead of a Python
  step per node.
Both take a *hub* whole: a node ending in a quote, where a string may open (`"`, ` "`, `":"`), holds
many tokens whose rest is plain text; when the state after the quote surely reads that much plain
text (the index's room), those tokens are allowed without a visit and only the other tails walked.
A *run* is taken whole the same way: a node below which every token goes on with digits only (`1`
above `12` and `123`: a thousand number tokens in Llama 3), when its state surely reads that many
digits (inside a number).
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from .dfa import DEAD, LazyDFA
from .plain import breaks_strings, is_plain

SMALL_WALK = 4000  # tokens under the admissible first bytes, below which the Python walk is faster
HANDOVER = 400  # tokens under the live frontier, below which the numpy walk finishes in Python
WIDE = 8  # children of a node beyond which the Python walk may look them up by byte instead
HUB_MIN = 32  # tokens with plain text past a quote for that quote's node to take them whole
RUN_MIN = 16  # tokens going on with digits only below a node for that node to take them whole
ENDS, GO_ON, WHOLE, SKIP = 1, 2, 4, 8  # what a Python walk looks at in a node (``TokenTrie.look``)


class TokenTrie:
    """The trie of ``tokens`` (pairs of token id and bytes; empty byte strings are left out)."""

    def __init__(self, tokens: list[tuple[int, bytes]], skippable=None, hubs: bool = False):
        by_bytes: dict[bytes, list[int]] = {}
        for tid, data in tokens:
            if data:
                by_bytes.setdefault(data, []).append(tid)
        levels: list[list[bytes]] = [[b""]]
        longer = list(by_bytes)
        while True:
            d = len(levels)
            longer = [data for data in longer if len(data) >= d]
            if not longer:
                break
            levels.append(sorted({data[:d] for data in longer}))
        self.base = np.cumsum([0] + [len(level) for level in levels]).tolist()
        n = self.base[-1]
        self.children: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.ends: list[list[int]] = [by_bytes.get(p, []) if p else [] for level in levels for p in level]
        self.first: list[np.ndarray] = []  # per level: child runs in the next level
        self.byte: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        self.end_tok: list[np.ndarray] = []  # per level: one token ending at the node, or -1
        for d, level in enumerate(levels):
            self.end_tok.append(np.array([ids[0] if ids else -1 for ids in self.ends[self.base[d]: self.base[d + 1]]],
                                         dtype=np.int64))
            if d + 1 == len(levels):
                self.first.append(np.zeros(len(level) + 1, dtype=np.int64))
                continue
            index = {p: i for i, p in enumerate(level)}
            below = levels[d + 1]
            parents = np.array([index[p[:-1]] for p in below], dtype=np.int64)
            self.byte.append(np.array([p[-1] for p in below], dtype=np.int64))
            self.first.append(np.concatenate([[0], np.cumsum(np.bincount(parents, minlength=len(level)))]))
            for j, (i, p) in enumerate(zip(parents.tolist(), below)):
                self.children[self.base[d] + i].append((p[-1], self.base[d + 1] + j))
        # duplicate byte strings (a special token spelled like text, byte-fallback twins): the
        # numpy walk reports the first id of a node, and these pairs copy its verdict to the others
        dups = [(ids[0], t) for ids in by_bytes.values() for t in ids[1:]]
        self.dup_first = np.array([a for a, _ in dups], dtype=np.int64)
        self.dup_other = np.array([b for _, b in dups], dtype=np.int64)
        self.subtree = [len(e) for e in self.ends]
        for node in range(n - 1, -1, -1):
            for _, child in self.children[node]:
                self.subtree[node] += self.subtree[child]
        # nodes with many children are looked up by byte when the state reads fewer bytes than that
        self.child_of = {node: dict(kids) for node, kids in enumerate(self.children) if len(kids) > WIDE}
        self.first_byte = dict(self.children[0])  # the root's children by byte
        # branches holding only ``skippable`` tokens (whitespace runs): node -> (longest token
        # below, its tokens), so a walk from a state with that much room sets them without a visit
        self.skip: dict[int, tuple[int, list[int]]] = {}
        if skippable is not None:
            self._find_skippable(levels, by_bytes, skippable)
        self.hubs: dict[int, tuple[int, np.ndarray, TokenTrie]] = {}
        self.runs: dict[int, tuple[int, np.ndarray]] = {}
        self.is_whole = [np.zeros(len(level), dtype=bool) for level in levels]  # a hub or a run
        if hubs:
            self._find_hubs(levels, by_bytes)
            self._find_runs(levels, by_bytes)
        self.whole = frozenset(self.hubs) | frozenset(self.runs)
        # per node, what a Python walk must look at: tokens ending there, children to go on to, a
        # hub or run, a skippable branch (``look_plain``: the first two only)
        self.look_plain = bytes((ENDS if self.ends[node] else 0) | (GO_ON if self.children[node] else 0) for node in range(n))
        self.look = bytes(self.look_plain[node] | (WHOLE if node in self.whole else 0) | (SKIP if node in self.skip else 0)
                          for node in range(n))
        # tuples, not lists: once the collector has seen them they are untracked, so a trie of a
        # few hundred thousand nodes does not make every full garbage collection slow
        self.children = [tuple(kids) for kids in self.children]
        self.ends = [tuple(ids) for ids in self.ends]
        self.below = [np.array(self.subtree[self.base[d]: self.base[d + 1]], dtype=np.int64) for d in range(len(levels))]

    def _find_skippable(self, levels, by_bytes, skippable) -> None:
        for d in range(len(levels) - 1, 0, -1):
            for i, prefix in enumerate(levels[d]):
                node = self.base[d] + i
                ids = by_bytes.get(prefix, [])
                if ids and not skippable(prefix):
                    continue
                kids = [self.skip.get(child) for _, child in self.children[node]]
                if all(kids):
                    longest = max([d if ids else 0] + [k[0] for k in kids])
                    self.skip[node] = (longest, tuple(ids) + tuple(t for k in kids for t in k[1]))

    def _find_hubs(self, levels, by_bytes) -> None:
        """Nodes whose prefix ends with a quote (a string may open there) and that hold at least
        ``HUB_MIN`` tokens with plain text past it: per node, the longest such tail, those tokens,
        and a trie of the other tails that do not break strings."""
        below: dict[bytes, list[tuple[int, bytes]]] = {}
        for data, ids in by_bytes.items():
            for i in range(len(data) - 1):
                if data[i] == 0x22:
                    below.setdefault(data[: i + 1], []).extend((t, data[i + 1:]) for t in ids)
        for prefix, tails in below.items():
            plain = [(len(tail), t) for t, tail in tails if is_plain(tail)]
            if len(plain) < HUB_MIN:
                continue
            d = len(prefix)
            i = bisect_left(levels[d], prefix)  # levels are sorted
            rest = TokenTrie([(t, tail) for t, tail in tails if not is_plain(tail) and not breaks_strings(tail)])
            self.hubs[self.base[d] + i] = (max(n for n, _ in plain), np.array([t for _, t in plain], dtype=np.int64), rest)
            self.is_whole[d][i] = True

    def _find_runs(self, levels, by_bytes) -> None:
        """Nodes below which every token goes on with digits only, at least ``RUN_MIN`` of them:
        per node, the longest such tail and those tokens."""
        below: dict[bytes, list[tuple[int, int]]] = {}
        for data, ids in by_bytes.items():
            start = len(data.rstrip(b"0123456789"))
            for i in range(max(start, 1), len(data)):
                below.setdefault(data[:i], []).extend((len(data) - i, t) for t in ids)
        for prefix, tails in below.items():
            d = len(prefix)
            i = bisect_left(levels[d], prefix)
            node = self.base[d] + i
            if len(tails) < RUN_MIN or self.subtree[node] - len(self.ends[node]) != len(tails):
                continue  # too few, or other tokens below too
            self.runs[node] = (max(n for n, _ in tails), np.array([t for _, t in tails], dtype=np.int64))
            self.is_whole[d][i] = True

    def allowed(self, dfa: LazyDFA, state: int, mask: np.ndarray, narrow: bool | None = None,
                skip_room: int = 0, rooms=None) -> None:
        """Set ``mask[t]`` for every token ``t`` of the trie whose bytes the automaton reads from
        ``state``. ``narrow``: whether the state reads little of the trie (None: judge it here
        with ``expected``); ``skip_room``: it surely reads that many bytes of skippable text;
        ``rooms``: ``plain(s)`` and ``digits(s)``, how many bytes of plain text and of digits state
        ``s`` surely reads, asked at hubs and runs (None: take none whole)."""
        if narrow is None:
            narrow = self.expected(dfa, state) <= SMALL_WALK
        if narrow:
            self._walk_python(dfa, [(0, state)], skip_room, rooms, mask)
        else:
            self._walk_frontier(dfa, state, mask, rooms)
        if len(self.dup_first):
            mask[self.dup_other] |= mask[self.dup_first]

    def expected(self, dfa: LazyDFA, state: int) -> int:
        """How many tokens survive the first two bytes (an upper bound on the Python walk's work)."""
        targets, picks = dfa.parts(state)
        moves = dfa.moves(state)
        if moves is not None:  # few first bytes: look them up
            firsts = [(b, self.first_byte[b]) for b in moves if b in self.first_byte]
        else:
            firsts = [(b, child) for b, child in self.children[0] if picks[b]]
        total = sum(self.subtree[child] for _, child in firsts)
        if total <= SMALL_WALK or len(firsts) > 16:  # many first bytes: a string-like state
            return total
        total = 0
        for b, child in firsts:
            total += len(self.ends[child])
            second = dfa.parts(targets[picks[b]])[1]
            total += sum(self.subtree[c] for b2, c in self.children[child] if second[b2])
        return total

    def allowed_from(self, dfa: LazyDFA, firsts: list[tuple[int, int]]) -> list[int]:
        """The tokens starting with a byte of ``firsts`` (pairs of first byte and the state it leads
        to) that the automaton reads on from there."""
        branch = self.first_byte
        return self._walk_python(dfa, [(branch[b], s) for b, s in firsts if b in branch and s != DEAD])

    def _take_whole(self, dfa: LazyDFA, node: int, state: int, rooms, mask: np.ndarray) -> bool:
        """Set ``mask`` for the tokens below hub or run ``node`` that ``state`` reads, when it
        surely reads every plain (digit) tail there; False, with ``mask`` untouched, when it may
        not (then the node is walked as any other)."""
        run = self.runs.get(node)
        if run is not None:
            if rooms.digits(state) < run[0]:
                return False
            mask[run[1]] = True
            return True
        longest, plain, rest = self.hubs[node]
        if rooms.plain(state) < longest:
            return False
        mask[plain] = True
        # the state reads plain text, so it is inside a string: tails that break strings are out
        rest._walk_python(dfa, [(0, state)], mask=mask)
        return True

    def _walk_python(self, dfa: LazyDFA, stack: list[tuple[int, int]], skip_room: int = 0,
                     rooms=None, mask: np.ndarray | None = None) -> list[int]:
        """Tokens strictly below each (node, state) of ``stack`` (set in ``mask`` when given, else
        returned); branches of skippable tokens no longer than ``skip_room`` are taken whole (the
        root state reads any such text), and so are hubs and runs whose state reads all their tails
        (``rooms``, which needs ``mask``)."""
        children, ends, child_of = self.children, self.ends, self.child_of
        targets_of, picks_of = dfa._targets, dfa._picks
        skip = self.skip if skip_room else None
        look = self.look if rooms is not None or skip else self.look_plain  # per node: what to look at
        out: list[int] = []
        while stack:
            node, s = stack.pop()
            kids = children[node]
            if len(kids) > WIDE:
                moves = dfa.moves(s)
                if moves is not None and len(moves) < len(kids):  # few bytes read: look them up
                    by_byte = child_of[node]
                    kids = [(b, by_byte[b]) for b in moves if b in by_byte]
            picks = picks_of[s]
            if picks is None:
                targets, picks = dfa.parts(s)
            else:
                targets = targets_of[s]
            for b, child in kids:
                k = picks[b]
                if not k:
                    continue
                what = look[child]
                if what == GO_ON:  # the common case: no token ends here, nothing to take whole
                    stack.append((child, targets[k]))
                    continue
                if what & SKIP and skip is not None:
                    skipped = skip[child]
                    if skipped[0] <= skip_room:
                        out.extend(skipped[1])
                        continue
                if what & ENDS:
                    out.extend(ends[child])
                if what & WHOLE and rooms is not None and self._take_whole(dfa, child, targets[k], rooms, mask):
                    continue
                if what & GO_ON:
                    stack.append((child, targets[k]))
        if mask is not None:
            mask[out] = True
        return out

    def _walk_frontier(self, dfa: LazyDFA, state: int, mask: np.ndarray, rooms=None) -> None:
        nodes = np.zeros(1, dtype=np.int64)  # indices within the level
        states = np.array([state + 1], dtype=np.int64)  # shifted: 0 is dead
        for d in range(len(self.first) - 1):
            lo = self.first[d][nodes]
            counts = self.first[d][nodes + 1] - lo
            total = int(counts.sum())
            if total == 0:
                return
            table, slots = dfa.slots(states)
            child = np.repeat(lo - (np.cumsum(counts) - counts), counts) + np.arange(total)
            nxt = table[np.repeat(slots, counts) * 256 + self.byte[d + 1][child]]
            live = np.flatnonzero(nxt)
            if len(live) == 0:
                return
            nodes, states = child[live], nxt[live].astype(np.int64)
            ends = self.end_tok[d + 1][nodes]
            mask[ends[ends >= 0]] = True
            base = self.base[d + 1]
            if rooms is not None:
                special = np.flatnonzero(self.is_whole[d + 1][nodes])
                if len(special):
                    kept = np.ones(len(nodes), dtype=bool)
                    for k in special.tolist():
                        if self._take_whole(dfa, int(nodes[k]) + base, int(states[k]) - 1, rooms, mask):
                            kept[k] = False
                    nodes, states = nodes[kept], states[kept]
            if int(self.below[d + 1][nodes].sum()) <= HANDOVER:
                stack = list(zip((nodes + base).tolist(), (states - 1).tolist()))
                self._walk_python(dfa, stack, 0, rooms, mask)
                return
