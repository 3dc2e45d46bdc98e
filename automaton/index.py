"""Token masks per automaton state: computed lazily, cached, shared by every matcher of a grammar.

A mask is a walk of the vocabulary's byte trie through the automaton (``trie.py``). Inside free
strings most of that walk is foregone: when a state surely reads ``room`` bytes of any plain text
(``plain.py``), every plain token that fits is allowed outright and only the other tokens are
walked, from a smaller trie built once per vocabulary for a few sizes of room; where plain ASCII
leads back into one state (a free string's inside, a key past the names it might still spell), only
the tokens' tails past their plain ASCII start are walked, many tokens sharing one, and the tokens
starting with a name's next letter from that letter's state. The configurations of a state may
have that room only together (a key that is a pattern property's ``/...`` or any other name), and
a state may refuse a few plain first bytes outright (those plain tokens are then taken out again). Whitespace between
values is the same on a small scale: the runs of whitespace tokens that fit are allowed outright
and their branches of the trie skipped; so are strings opened inside a token (``trie.py``'s hubs).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from functools import lru_cache
from operator import itemgetter

import numpy as np

from .dfa import DEAD, LazyDFA
from .loops import LoopTokens
from .plain import (DIGITS, PLAIN, ROOM_CAP, WHITESPACE, TextClass, TextReach, breaks_strings, is_plain, is_whitespace,
                    room_together)
from .trie import SMALL_WALK, TokenTrie

LOOP_MIN = 16  # bytes a state must loop on for the loop shortcut
LOOP_WALKS = 3000  # tokens that leave the loop and would need a walk, beyond which the trie is faster
MAX_REFUSED = 16  # plain first bytes a state may refuse and still have its plain tokens allowed wholesale
MAX_ODD = 16  # plain ASCII bytes that may lead elsewhere than the plain loop, each walked on its own
ROOMS = (8, 16)  # room sizes with their own trie, besides the longest plain token's


@lru_cache(maxsize=None)
def _ascii_bytes(text: TextClass) -> bytes:
    """The ASCII bytes of a text class."""
    return bytes(b for lo, hi in text.ascii_ranges for b in range(lo, hi + 1))


@lru_cache(maxsize=None)
def _ascii_entries(text: TextClass):
    """A row's picks at the ASCII bytes of a text class, picked out in C."""
    return itemgetter(*_ascii_bytes(text))


_PLAIN_ASCII_BYTES = _ascii_bytes(PLAIN)
_PLAIN_ASCII = list(_PLAIN_ASCII_BYTES)
_PLAIN_ASCII_PICKS = _ascii_entries(PLAIN)
# plain bytes JSON reads only inside strings: a state that reads one is inside a string, whatever
# configuration (JSON's lexical state is a function of the text read so far)
_STRING_ONLY = [b for b in _PLAIN_ASCII if chr(b) not in " {}[],:-+.0123456789eEtrufalsn"]


def _by_first_byte(tokens) -> dict[int, np.ndarray]:
    """The ids of ``tokens`` (pairs of id and bytes) grouped by their first byte."""
    groups: dict[int, list[int]] = {}
    for t, data in tokens:
        groups.setdefault(data[0], []).append(t)
    return {b: np.array(ids, dtype=np.int64) for b, ids in groups.items()}


def _ascii_run(data: bytes) -> int:
    """How many bytes ``data`` starts with that are plain ASCII (no quote, backslash, control)."""
    return len(data) - len(data.lstrip(_PLAIN_ASCII_BYTES))


class PlainTries:
    """The plain tokens sorted by length, and per room size the trie of every token that is not
    plain text of at most that many bytes, nor breaks strings.

    A state with room is inside a string: it reads any plain ASCII letter next, which JSON allows
    nowhere else, and the prefix it was reached by ends inside a string for every configuration
    alike (JSON's lexical state is a function of the text). Plain text keeps it there, so a token
    whose plain start runs into a control character or broken UTF-8 is refused by all of them.
    """

    def __init__(self, tokens: list[tuple[int, bytes]], size: int, rooms=ROOMS):
        members = sorted((len(data), t) for t, data in tokens if is_plain(data))
        tokens_by_id = dict(tokens)
        self.ids = np.array([t for _, t in members], dtype=np.int64)
        self.lengths = np.array([n for n, _ in members], dtype=np.int64)
        longest = members[-1][0] if members else 0
        # the plain tokens of at most 2**k bytes as ready masks: most of a room's tokens are one OR
        self.fits: list[tuple[int, np.ndarray]] = []
        width = 1
        while members and width < 2 * longest:
            fit = np.zeros(size, dtype=bool)
            fit[self.ids[: np.searchsorted(self.lengths, width, side="right")]] = True
            self.fits.append((width, fit))
            width *= 2
        length = {t: n for n, t in members}
        self.by_first = _by_first_byte((t, tokens_by_id[t]) for _, t in members)
        self.rooms: list[tuple[int, TokenTrie]] = []
        for room in sorted({r for r in rooms if r < longest} | ({longest} if longest else set())):
            self.rooms.append((room, TokenTrie([(t, d) for t, d in tokens
                                                if not 0 < length.get(t, 0) <= room and not breaks_strings(d)])))
        # the tokens of the longest room's trie from their first byte that is not plain ASCII (those
        # that start with it, and the others): when plain ASCII leads back to the state it came from
        # (a free string's inside), that byte is reached in that state, so only these tails need a
        # walk, and many tokens share one
        rest = [(t, d, _ascii_run(d)) for t, d in tokens if not 0 < length.get(t, 0) <= longest and not breaks_strings(d)]
        self.tails_first = TokenTrie([(t, d) for t, d, at in rest if at == 0])
        self.tails_after = TokenTrie([(t, d[at:]) for t, d, at in rest if at > 0])
        self.after_by_first = _by_first_byte((t, d) for t, d, at in rest if at > 0)

    def allow_tails(self, dfa: LazyDFA, state: int, looping: int, odd: tuple[int, ...], mask: np.ndarray) -> None:
        """Set ``mask`` for the tokens of the longest room's trie that ``state`` reads, when every
        plain ASCII byte but those of ``odd`` leads to ``looping``, which they lead back to: the
        tails past the plain start are walked from there, and the tokens starting with an odd
        byte again from that byte's own state."""
        self.tails_first.allowed(dfa, state, mask, narrow=True)
        self.tails_after.allowed(dfa, looping, mask, narrow=True)
        if not odd:
            return
        for b in odd:
            if b in self.after_by_first:
                mask[self.after_by_first[b]] = False
        mask[self.rooms[-1][1].allowed_from(dfa, [(b, dfa.step(state, b)) for b in odd])] = True

    def refuse_first(self, refused, mask: np.ndarray) -> None:
        """Clear ``mask`` for every plain token that starts with a byte of ``refused``."""
        for b in refused:
            mask[self.by_first[b]] = False

    def pick(self, room: int) -> TokenTrie | None:
        """The trie for a state with ``room`` bytes of plain text (None when it has too little)."""
        best = None
        for size, trie in self.rooms:
            if size <= room:
                best = trie
        return best

    def allow_fitting(self, room: int, mask: np.ndarray) -> None:
        """Set ``mask`` for every plain token of at most ``room`` bytes."""
        width, fit = 0, None
        for w, f in self.fits:
            if w <= room:
                width, fit = w, f
        if fit is not None:
            mask |= fit
        lo, hi = np.searchsorted(self.lengths, [width, room], side="right")
        mask[self.ids[lo:hi]] = True


class VocabTries:
    """One vocabulary's tries: every token, and per text class the smaller ones; and its tokens
    for looping states."""

    def __init__(self, token_bytes):
        tokens = [(t, data) for t, data in enumerate(token_bytes) if data]
        self.token_bytes = token_bytes
        self.full = TokenTrie(tokens, skippable=is_whitespace, hubs=True)
        self.plain = PlainTries(tokens, len(token_bytes))
        self.loops = LoopTokens(token_bytes)
        self.first_counts = np.bincount([data[0] for _, data in tokens], minlength=256)  # tokens per first byte
        self.longest = max((len(data) for _, data in tokens), default=0)  # bytes a token reads at most

    def allowed(self, dfa: LazyDFA, state: int, rooms, mask: np.ndarray) -> None:
        """Set ``mask`` where a token is allowed from ``state``; ``rooms.room(state, text)`` says how
        many bytes of any text of that class the state surely reads (``plain`` and ``digits`` say it
        for those classes), ``rooms.plain_room(state)`` the same for plain text, with the first bytes
        that text must avoid (asked only when it helps)."""
        plain, refused = rooms.plain_room(state)
        trie = self.plain.pick(plain)
        if trie is not None:
            self.plain.allow_fitting(plain, mask)
            self.plain.refuse_first(refused, mask)
            looping = self._plain_loop(dfa, state) if trie is self.plain.rooms[-1][1] else None
            if looping is not None:
                self.plain.allow_tails(dfa, state, *looping, mask)
            else:
                trie.allowed(dfa, state, mask, narrow=False)
            return
        narrow = self.full.expected(dfa, state) <= SMALL_WALK
        if narrow:
            self.full.allowed(dfa, state, mask, narrow=True, skip_room=rooms.room(state, WHITESPACE), rooms=rooms)
        elif not self._loop_allowed(dfa, state, mask):
            self.full.allowed(dfa, state, mask, narrow=False, rooms=rooms)

    @staticmethod
    def _plain_loop(dfa: LazyDFA, state: int) -> tuple[int, tuple[int, ...]] | None:
        """The state that plain ASCII bytes lead to from ``state`` when it leads there again from
        itself on every one (inside a free string, or a key past the names it might still spell),
        with the few plain ASCII bytes that lead elsewhere from ``state`` (the next letters of
        names); None when there is none."""
        targets, picks = dfa.parts(state)
        plain_picks = _PLAIN_ASCII_PICKS(picks)
        most = max(set(plain_picks), key=plain_picks.count)
        if most == 0 or len(_PLAIN_ASCII) - plain_picks.count(most) > MAX_ODD:
            return None
        after = targets[most]
        again_targets, again_picks = dfa.parts(after)
        if any(again_targets[k] != after for k in set(_PLAIN_ASCII_PICKS(again_picks))):
            return None
        return after, tuple(b for b, k in zip(_PLAIN_ASCII, plain_picks) if k != most)

    def _loop_allowed(self, dfa: LazyDFA, state: int, mask: np.ndarray) -> bool:
        """The mask of a broad state that loops on itself over many bytes (``loops.py``); False,
        with ``mask`` untouched, when the state does not or too many tokens would need a walk."""
        row = dfa.row_array(state)
        loop = row == state
        if loop.sum() < LOOP_MIN:
            return False
        if self.first_counts[(row != DEAD) & ~loop].sum() > LOOP_WALKS:
            return False  # that many tokens leave the loop at their first byte alone: skip the split
        split = self.loops.split(loop)
        walks = np.flatnonzero(row[split.out_byte] != DEAD)
        if len(walks) > LOOP_WALKS:
            return False
        mask[split.inside] = True
        token_bytes = self.token_bytes
        for t, at in zip(split.out_ids[walks].tolist(), split.out_at[walks].tolist()):
            if dfa.walk(token_bytes[t][at:], state) != DEAD:
                mask[t] = True
        return True


_TRIES: dict[str, VocabTries] = {}
_VOCAB_LOCK = threading.Lock()


def vocab_tries(vocab) -> VocabTries:
    """The tries of a vocabulary, built once per vocabulary (a few seconds for 128k tokens)."""
    return per_vocabulary(_TRIES, vocab, VocabTries)


def per_vocabulary(kept: dict, vocab, make):
    """``make(vocab.token_bytes)``, made once per vocabulary and kept in ``kept`` (the last 8)."""
    key = vocab.fingerprint()
    with _VOCAB_LOCK:
        found = kept.get(key)
        if found is None:
            if len(kept) >= 8:
                kept.pop(next(iter(kept)))
            found = kept[key] = make(vocab.token_bytes)
    return found


class MaskLedger:
    """Every index's cached masks in the order they were computed, so that all grammars together
    (``compile`` keeps up to 64, each with its indexes) stay under one memory budget: past it, the
    oldest mask of the process goes first, whichever grammar holds it. ``limit`` may be changed."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self._order: OrderedDict[tuple[int, int], weakref.ref] = OrderedDict()  # (index serial, state)
        # re-entrant: a collection while adding may finalize an index, which calls ``forget``
        self._lock = threading.RLock()

    def add(self, index: TokenIndex, state: int, mask: np.ndarray) -> np.ndarray:
        """Keep ``mask`` as ``state``'s in ``index``; the one kept (another thread may have
        computed it first)."""
        with self._lock:
            kept = index._cache.get(state)
            if kept is not None:
                return kept
            index._cache[state] = mask
            self._order[(index.serial, state)] = weakref.ref(index)
            self.used += mask.nbytes
            while len(index._cache) > index.max_entries:
                self._drop(index, next(iter(index._cache)))
            while self.used > self.limit and self._order:
                (_, oldest), ref = next(iter(self._order.items()))
                owner = ref()
                if owner is None:  # being finalized: ``forget`` settles its account
                    self._order.popitem(last=False)
                else:
                    self._drop(owner, oldest)
        return mask

    def _drop(self, index: TokenIndex, state: int) -> None:
        self._order.pop((index.serial, state))
        self.used -= index._cache.pop(state).nbytes

    def forget(self, serial: int, cache: dict) -> None:
        """An index is gone: its masks leave the account (called by its finalizer)."""
        with self._lock:
            for state, mask in cache.items():
                self._order.pop((serial, state), None)
                self.used -= mask.nbytes
            cache.clear()


MASKS = MaskLedger(1 << 30)
_SERIALS = itertools.count()


class TokenIndex:
    """Masks for one grammar and one vocabulary; thread-safe, with a bounded cache (``max_cache_bytes``
    for this index, ``MASKS.limit`` for all of them together). The grammar holds its indexes
    (``token_index``) and an index holds only the grammar's automaton, not the grammar: no cycle, so
    a dropped grammar is freed at once, not by a later full collection in the middle of someone
    else's token step (MaskBench's previous schemas: up to 0.6 s, 221k objects, in one step)."""

    def __init__(self, grammar, vocab, max_cache_bytes: int = 256 << 20):
        self.vocab = vocab
        self.dfa: LazyDFA = grammar.automaton
        self.size = vocab.size
        self.eos = np.array(sorted(vocab.eos_ids), dtype=np.int64)
        self.tries = vocab_tries(vocab)
        self._reach: dict[tuple[int, TextClass], TextReach] = {}
        self._rooms: dict[TextClass, dict[int, int]] = {}  # per text class: state -> ``_best_room``
        self._cache: dict[int, np.ndarray] = {}  # in the order computed
        # masks shared by counts (``shared_state``), once some counted block has counts that can share
        self._shared: dict[int, int] | None = None
        self._blocks_seen = 0  # counted blocks looked at for that (a program grows: ``Program.enter``)
        self.max_entries = max(16, max_cache_bytes // max(1, self.size))
        self.serial = next(_SERIALS)
        weakref.finalize(self, MASKS.forget, self.serial, self._cache)
        self.eos_only = np.zeros(self.size, dtype=bool)
        self.eos_only[self.eos] = True
        self.eos_only.flags.writeable = False

    def room(self, state: int, text: TextClass) -> int:
        """Bytes of any text of class ``text`` that ``state`` surely reads: the most any of its
        configurations reads, each with the liveness of the depth it has left."""
        if 0 in _ascii_entries(text)(self.dfa.parts(state)[1]):
            return 0  # no configuration reads every ASCII byte of the class: none has room
        return self._best_room(state, text)

    def plain(self, state: int) -> int:
        """``room`` of plain text (asked at the trie's hubs)."""
        return self.room(state, PLAIN)

    def digits(self, state: int) -> int:
        """``room`` of digits (asked at the trie's runs)."""
        return self.room(state, DIGITS)

    def _best_room(self, state: int, text: TextClass) -> int:
        """``room`` without its first look at the row; kept per state, as a walk asks it again at
        every hub or run that meets the state (six in ten asks across MaskBench)."""
        known = self._rooms.get(text)
        if known is None:
            known = self._rooms.setdefault(text, {})
        best = known.get(state)
        if best is not None:
            return best
        dfa = self.dfa
        live = dfa.program.live
        best = 0
        for top, left in dfa.tops(state):
            best = max(best, self._reach_of(live(left), text)(top))
            if best >= ROOM_CAP:
                break  # as much as any token needs
        known[state] = best
        return best

    def plain_room(self, state: int) -> tuple[int, frozenset[int]]:
        """The room of plain text at ``state`` (``room``), or, when that is too little for the
        room tries, the room of its configurations together for plain text that avoids the few
        plain ASCII bytes the state refuses outright, with those bytes."""
        picks = self.dfa.parts(state)[1]
        entries = _PLAIN_ASCII_PICKS(picks)
        dead = entries.count(0)
        if dead > MAX_REFUSED:
            return 0, frozenset()
        refused = frozenset(b for b, k in zip(_PLAIN_ASCII, entries) if not k) if dead else frozenset()
        plain = 0 if refused else self._best_room(state, PLAIN)  # a refused byte: no room alone
        if plain >= ROOMS[0] or not any(picks[b] for b in _STRING_ONLY):
            return plain, frozenset()
        dfa = self.dfa
        live = dfa.program.live
        starts = [(self._reach_of(live(left), PLAIN), top) for top, left in dfa.tops(state)]
        together = room_together(starts, PLAIN, refused)
        return (together, refused) if together > plain else (plain, frozenset())

    def _reach_of(self, live, text: TextClass) -> TextReach:
        """One analysis per liveness level (levels that agree are one object) and text class."""
        key = (id(live), text)
        reach = self._reach.get(key)
        if reach is None:
            reach = self._reach.setdefault(key, TextReach(self.dfa.program, live, text))
        return reach

    def shared_state(self, state: int) -> int:
        """The state whose mask ``state`` has (``LazyDFA.mask_state``): itself unless the program
        has counts far from their bounds, which share one."""
        if self._shared is None:
            blocks = self.dfa.program.counted
            if len(blocks) == self._blocks_seen:
                return state
            longest = self.tries.longest
            if not any(block.merges_counts(longest) for block in blocks[self._blocks_seen:]):
                self._blocks_seen = len(blocks)
                return state
            self._shared = {}
        found = self._shared.get(state)
        if found is None:
            found = self._shared[state] = self.dfa.mask_state(state, self.tries.longest)
            self._shared[found] = found  # a twin is its own
        return found

    def mask(self, state: int) -> np.ndarray:
        """A read-only bool array over the vocabulary: True where a token may come next."""
        m = self._cache.get(state)
        if m is not None:
            return m
        if not 0 <= state < self.dfa.num_states:
            raise ValueError(f"no mask for automaton state {state}: the dead state or no state at all")
        shared = self.shared_state(state)
        if shared != state:
            return self.mask(shared)
        m = np.zeros(self.size, dtype=bool)
        self.tries.allowed(self.dfa, state, self, m)
        if self.dfa.is_accepting(state):
            m[self.eos] = True
        m.flags.writeable = False
        return MASKS.add(self, state, m)


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
