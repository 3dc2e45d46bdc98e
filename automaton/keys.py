"""Distinct strings: the keys of each open JSON object, and the strings of each open ``uniqueItems``
array, written so far, so that none is written twice.

A grammar lets a key it does not name repeat (``{"a": 1, "a": 2}``): which keys are distinct is
no regular language. Parsers keep the last value, so where the grammar counts members
(``minProperties`` beside free keys) or asks some member to be a witness (a ``not`` of
``additionalProperties``, a ``oneOf`` decided member by member), a repeated key would pass text
whose document is invalid. Nor are the distinct strings of a ``uniqueItems`` array regular. Such a
grammar says so (``Program.distinct_strings``; its unique arrays' ``[`` lead to the states in
``Program.unique_opens``), and its matchers walk this small JSON lexer beside the automaton: a
token that would close a key its object has, or an item string its array has, is taken out of the
mask, and walking one wedges the sequence; so is a token after which the string due could only
repeat one (``stranding``: a finite set of them, all written). A schema needing more distinct
strings than it allows is ``Unsatisfiable`` at compile; should a mask still hold nothing else
(a language the compiler could not read), the repeat is let through and logged once.

A walk's state is a tuple, kept per token for rollback: ``(frames, mode, text)``, where ``frames``
holds per open container what it has written: an object a frozenset of its keys, a unique array a
1-tuple of the frozenset of its strings, any other array None; ``mode`` says where in the text the
walk is, and ``text`` is the raw bytes of the key or item string being written.
"""

from __future__ import annotations

import json
from json.decoder import scanstring
from functools import lru_cache

import numpy as np

from .index import per_vocabulary

OUTSIDE, EXPECT_KEY, IN_KEY, KEY_ESCAPE, IN_STRING, STRING_ESCAPE = range(6)  # IN_KEY: a string kept
START = ((), OUTSIDE, b"")
REPEATED = None  # the walk of a token that closes a key or item string written already
_QUOTE, _BACKSLASH, _OPEN = ord('"'), ord("\\"), ord("[")
_NONE = np.zeros(0, dtype=np.int64)
_BLANK_BYTES = b" \t\n\r"


def walk(state, data: bytes, strict: bool = True, unique_at=None):
    """The state after ``data``, or ``REPEATED`` where it closes a key or item string already
    written (``strict``; else the string is passed over). ``unique_at(i)``: whether the ``[`` at
    ``data[i]`` opens a ``uniqueItems`` array (``unique_opener``; none where not given)."""
    frames, mode, key = state
    for i, b in enumerate(data):
        if mode == IN_STRING:
            if b == _QUOTE:
                mode = OUTSIDE
            elif b == _BACKSLASH:
                mode = STRING_ESCAPE
        elif mode == IN_KEY:
            if b == _QUOTE:
                name, top = _decoded(key), frames[-1]
                seen = top[0] if type(top) is tuple else top
                if name in seen:
                    if strict:
                        return REPEATED
                else:
                    seen = seen | {name}
                    frames = frames[:-1] + ((seen,) if type(top) is tuple else seen,)
                mode, key = OUTSIDE, b""
            else:
                key += bytes((b,))
                if b == _BACKSLASH:
                    mode = KEY_ESCAPE
        elif mode == KEY_ESCAPE:
            key += bytes((b,))
            mode = IN_KEY
        elif mode == STRING_ESCAPE:
            mode = IN_STRING
        elif b == _QUOTE:  # a key, or an item of a unique array: kept
            mode = IN_KEY if mode == EXPECT_KEY or frames and type(frames[-1]) is tuple else IN_STRING
        elif b == 0x7B:  # {
            frames, mode = frames + (frozenset(),), EXPECT_KEY
        elif b == _OPEN:
            frames, mode = frames + ((frozenset(),) if unique_at is not None and unique_at(i) else None,), OUTSIDE
        elif b in (0x7D, 0x5D):  # } ]
            frames, mode = frames[:-1], OUTSIDE
        elif b == 0x2C:  # , (a key or a unique array's string is due)
            mode = EXPECT_KEY if frames and frames[-1] is not None else OUTSIDE
        elif b == 0x3A:  # :
            mode = OUTSIDE
    return frames, mode, key


def unique_opener(dfa, state: int, data: bytes):
    """``unique_at`` for ``walk`` of ``data`` from automaton state ``state`` (None where the
    grammar has no unique arrays or ``data`` opens no array)."""
    opens = dfa.program.unique_opens
    if not opens or _OPEN not in data:
        return None
    edges = dfa.program.edges
    at = [0, state]  # the walk so far: ``walk`` asks in order, so each byte is stepped once

    def unique_at(i: int) -> bool:
        at[1] = s = dfa.walk(data[at[0]:i], at[1]) if at[1] >= 0 else at[1]
        at[0] = i
        return s >= 0 and any(dst in opens for top, _ in dfa.tops(s) for lo, hi, dst in edges[top] if lo <= _OPEN <= hi)
    return unique_at


def _decoded(raw: bytes) -> str:
    """A string's text as a parser reads it (a malformed one as its bytes: the automaton refuses it)."""
    if raw.isascii() and b"\\" not in raw:
        return raw.decode()  # (most keys: no escape to read)
    text = _read(raw)
    return raw.decode("utf-8", "replace") if text is None else text


def _read(raw: bytes) -> str | None:
    """The text of a JSON string's inside ``raw``, None where it is no whole one."""
    try:
        inside = raw.decode()
        text, end = scanstring(inside + '"', 0)
    except ValueError:  # (UnicodeDecodeError and JSONDecodeError both)
        return None
    return text if end == len(inside) + 1 else None


@lru_cache(maxsize=4096)
def _spelled(name: str) -> bytes:
    """A kept string as JSON writes it raw (what a token continuing or beginning it spells)."""
    return json.dumps(name, ensure_ascii=False)[1:-1].encode()


def _seen(frame) -> frozenset:
    """What a frame keeps: an object's keys, a unique array's strings (nothing for another array)."""
    return frame[0] if type(frame) is tuple else frame or frozenset()


def _first_character(data: bytes) -> str:
    """The first character a quote-free token adds to a string ("" where it is cut short there)."""
    end = data.find(b"\\", 1) if data[:1] == b"\\" else len(data)
    for cut in range(min(end if end > 0 else len(data), 6 if data[:2] == b"\\u" else 4), 0, -1):
        text = _read(data[:cut])
        if text is None:
            continue
        return text[0] if text and not "\ud800" <= text[0] <= "\udfff" else ""
    return ""


def _opens_and_closes(data: bytes) -> bool:
    """Whether ``data`` opens an object or an array and holds two quotes past that."""
    first = min((i for i in (data.find(b"{"), data.find(b"[")) if i >= 0), default=-1)
    return first >= 0 and data.count(b'"', first) >= 2


def may_repeat(state) -> bool:
    """Whether some token could close a string already written from ``state``: a container open
    somewhere that keeps one (a token may close a value, a container and begin a key)."""
    return any(_seen(frame) for frame in state[0])


class QuotedTokens:
    """A vocabulary's tokens as the walk of kept strings asks for them: those holding a quote (the
    only ones that can close a string) by how many, by the text before the first (what they add
    to a string they close) and after the last (what they begin, by the parity of their quotes);
    every token by its bytes (twins beside); the quote-free ones with an escape by the character
    they add first; blanks; those ending past a comma; those opening a container and closing a
    string inside it."""

    def __init__(self, token_bytes):
        n = len(token_bytes)
        # the vocabulary as one array of bytes, each byte's token beside it: counts per token in C
        sizes = np.fromiter((len(data) if data else 0 for data in token_bytes), dtype=np.int64, count=n)
        text = np.frombuffer(b"".join(data or b"" for data in token_bytes), dtype=np.uint8)
        owner = np.repeat(np.arange(n), sizes)

        def per_token(where: np.ndarray) -> np.ndarray:
            return np.bincount(owner[where], minlength=n)

        counts = per_token(text == _QUOTE)
        backslashed = per_token(text == _BACKSLASH) > 0
        blank_bytes = np.isin(text, list(_BLANK_BYTES))
        self.one = np.flatnonzero(counts >= 1)
        self.two = np.flatnonzero(counts >= 2)
        self.three = np.flatnonzero(counts >= 3)
        by_head: dict[bytes, list[int]] = {}
        for t in self.one:
            by_head.setdefault(token_bytes[t].split(b'"', 1)[0], []).append(int(t))
        self.by_head = {head: np.array(ids) for head, ids in by_head.items()}
        self.escaping = np.array([t for head, ids in by_head.items() if b"\\" in head for t in ids], dtype=np.int64)
        # the tokens by their bytes (a token with the bytes of another, a SentencePiece byte
        # token's, listed beside it in ``twins``)
        self.by_bytes = dict(zip(token_bytes, range(n)))
        self.twins: dict[int, list[int]] = {}
        if len(self.by_bytes) < n - max(0, int((sizes == 0).sum()) - 1):
            for t, data in enumerate(token_bytes):
                if data and self.by_bytes[data] != t:
                    self.twins.setdefault(self.by_bytes[data], []).append(t)
        # the quote-free tokens with an escape, by the character they add to a string first ("": one
        # they begin cut short, an escape or a character whose bytes go on in the next token)
        by_first: dict[str, list[int]] = {}
        for t in np.flatnonzero(backslashed & (counts == 0)).tolist():
            by_first.setdefault(_first_character(token_bytes[t]), []).append(t)
        self.backslashed = {first: np.array(ids, dtype=np.int64) for first, ids in by_first.items()}
        self.blank = np.flatnonzero((sizes > 0) & (per_token(~blank_bytes) == 0))
        # what a token leaves due: a comma and blanks after it, or the text after its last quote
        at = np.arange(len(text))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        filled = sizes > 0

        def last(where: np.ndarray) -> np.ndarray:  # per token, the position of its last byte so picked (-1: none)
            found = np.full(n, -1, dtype=np.int64)
            found[filled] = np.maximum.reduceat(np.where(where, at, -1), starts[filled])
            return found

        commas = last(text == ord(","))
        self.comma_blank = np.flatnonzero((commas >= 0) & (commas >= last(~blank_bytes)))
        self.quoted_comma_blank = self.comma_blank[counts[self.comma_blank] > 0]
        by_tail: tuple[dict, dict] = ({}, {})  # by the parity of their quotes (which says whether the last opens)
        for t in self.one[~backslashed[self.one]].tolist():
            by_tail[counts[t] % 2].setdefault(token_bytes[t].rsplit(b'"', 1)[1], []).append(t)
        self.by_tail = tuple({tail: np.array(ids) for tail, ids in tails.items()} for tails in by_tail)
        self.escaped = self.one[backslashed[self.one]]
        # those opening a container and closing a string inside it: they may repeat (or strand) a
        # string written inside themselves, whatever came before
        self.opening = np.array([t for t in self.two if _opens_and_closes(token_bytes[t])], dtype=np.int64)

    def spelling(self, data: bytes) -> list[int]:
        """The tokens whose bytes are ``data`` (none, one, or a few twins)."""
        t = self.by_bytes.get(data)
        return [] if t is None else [t, *self.twins.get(t, ())]

    def candidates(self, state) -> np.ndarray:
        """Tokens that might close a key already written from ``state``: inside a plain key, those
        that spell the rest of one of its object's keys and a quote (or close a key further on);
        inside a key with escapes, any with a quote; elsewhere one quote to open a key and one to
        close it (and one more to leave a string first)."""
        frames, mode, key = state
        if mode == IN_KEY and b"\\" not in key:
            names = _seen(frames[-1])
            spelled = [_spelled(name) for name in names]
            if all(name.isascii() and b"\\" not in s for name, s in zip(names, spelled)):
                found = [self.by_head.get(s[len(key):]) for s in spelled if s.startswith(key)]
                # (and those spelling the rest with escapes, or closing a key further on)
                return np.concatenate([f for f in found if f is not None] + [self.escaping, self.three])
        if mode in (IN_KEY, KEY_ESCAPE):
            return self.one
        return self.three if mode in (IN_STRING, STRING_ESCAPE) else self.two

    def stranding_candidates(self, walked) -> np.ndarray:
        """Tokens after which a kept string may be due, or written toward one written already
        (``stranding``): those ending past a comma (inside a string, those leaving it first),
        those whose text after their last quote begins one written (in any open container: a
        token may close some first), those with an escape; where one is due, blanks; inside one
        that begins one written, those spelling more of it."""
        frames, mode, key = walked
        inside = mode not in (OUTSIDE, EXPECT_KEY)
        found = [self.quoted_comma_blank if inside else self.comma_blank, self.escaped]
        if mode == EXPECT_KEY:
            found.append(self.blank)
        # those whose last quote opens a string: an even count of them inside one, odd outside (after
        # an escape's backslash, either)
        tails = [self.by_tail[not inside]] if mode not in (KEY_ESCAPE, STRING_ESCAPE) else self.by_tail
        for name in frozenset().union(*(_seen(frame) for frame in frames)):
            spelled = _spelled(name)
            found += [by[spelled[:j]] for by in tails for j in range(len(spelled) + 1) if spelled[:j] in by]
        if mode in (IN_KEY, KEY_ESCAPE) and _due(walked):
            plain = mode == IN_KEY and key.isascii() and b"\\" not in key
            if not plain:  # (what an escape adds is read only where the string so far is plain)
                found += self.backslashed.values()
            elif "" in self.backslashed:
                found.append(self.backslashed[""])
            for name in _seen(frames[-1]):
                spelled = _spelled(name)
                if plain and len(name) > len(key) and name.startswith(key.decode()):
                    found.append(self.backslashed.get(name[len(key)], _NONE))  # an escape spelling more of it
                if spelled.startswith(key):
                    rest = spelled[len(key):]
                    found += [np.array(self.spelling(rest[:j]), dtype=np.int64) for j in range(1, len(rest) + 1)]
        return np.unique(np.concatenate(found))


_QUOTED: dict[str, QuotedTokens] = {}  # per vocabulary fingerprint (a process serves a few)


def quoted_tokens(vocab) -> QuotedTokens:
    return per_vocabulary(_QUOTED, vocab, QuotedTokens)


def _with(candidates: np.ndarray, opening: np.ndarray) -> np.ndarray:
    """``candidates`` and the tokens opening a container (``QuotedTokens.opening``), each once."""
    return np.union1d(candidates, opening) if len(opening) else candidates


def repeating(dfa, at: int, state, mask: np.ndarray, vocab) -> list[int]:
    """The tokens ``mask`` allows from automaton state ``at`` that would close a key already
    written (``walk`` each)."""
    quoted = quoted_tokens(vocab)
    candidates = _with(quoted.candidates(state), quoted.opening) if may_repeat(state) else quoted.opening
    token_bytes = vocab.token_bytes
    return [int(t) for t in candidates[mask[candidates]]
            if walk(state, data := token_bytes[t], unique_at=unique_opener(dfa, at, data)) is REPEATED]


SEARCH_BUDGET = 64  # automaton states a search for a fresh string expands (past them: taken as found)
# bytes in the order a search tries them: the quote first (a string closes soonest), then plain text
_ORDER = sorted(range(256), key=lambda b: (b != _QUOTE, not (0x30 <= b <= 0x39 or 0x41 <= b <= 0x7A), b))
_BYTES = [bytes((b,)) for b in range(256)]


def stranded(dfa, state: int, walked) -> bool:
    """Whether the kept string being written (or due next, past a ``,``) can close only as one
    its container has: a depth-first search of the automaton's bytes from ``state``, each state's
    bytes tried one at a time (a fresh string mostly closes a byte or two on), up to
    ``SEARCH_BUDGET`` states (past them, not stranded)."""
    stack, visited = [(*dfa.parts(state), walked, _tried(dfa, state))], {(state, walked)}
    while stack:
        targets, picks, w, untried = stack[-1]
        b = next(untried, None)
        if b is None:
            stack.pop()
            continue
        after = walk(w, _BYTES[b])
        if after is REPEATED:
            continue
        if w[1] == IN_KEY and after[1] == OUTSIDE:
            return False  # closed, and fresh
        target = targets[picks[b]]
        if (target, after) in visited:
            continue
        if len(visited) >= SEARCH_BUDGET:
            return False
        visited.add((target, after))
        stack.append((*dfa.parts(target), after, _tried(dfa, target)))
    return True


def _tried(dfa, state: int):
    """The bytes ``state`` reads, in the order a search tries them (``_ORDER``)."""
    order = dfa.facts.get(("order", state))
    if order is None:
        picks = dfa.parts(state)[1]
        order = dfa.facts[("order", state)] = bytes(b for b in _ORDER if picks[b])
    return iter(order)


def _due(walked) -> bool:
    """Whether a kept string is being written, or is due next (past a ``,``), in a container that
    has some, and may yet close as one of them (what ``stranded`` asks)."""
    frames, mode, key = walked
    if not frames or mode not in (IN_KEY, KEY_ESCAPE, EXPECT_KEY):
        return False
    kept = _seen(frames[-1])
    if not kept or mode == EXPECT_KEY:
        return bool(kept)
    if key.isascii() and b"\\" not in key:
        written = key.decode()
        return any(name.startswith(written) for name in kept)
    for cut in range(min(len(key), 12) + 1):  # (an escape or a character may be cut short)
        written = _read(key[:len(key) - cut])
        if written is None:
            continue
        return any(name.startswith(written) for name in kept)
    return True


def stranding(dfa, state: int, walked, mask: np.ndarray, vocab) -> list[int]:
    """The tokens ``mask`` allows after which the kept string being written (or due next) can
    close only as one its container has (``stranded``): a finite set of them, all written."""
    quoted = quoted_tokens(vocab)
    found = _with(quoted.stranding_candidates(walked), quoted.opening) if may_repeat(walked) else quoted.opening
    token_bytes = vocab.token_bytes
    out = []
    known: dict = {}  # (automaton state, walk) after a token -> stranded there (many tokens lead to one)
    for t in found[mask[found]]:
        data = token_bytes[t]
        after = walk(walked, data, unique_at=unique_opener(dfa, state, data))
        if after is REPEATED or not _due(after):
            continue
        place = (dfa.walk(data, state), after)
        found_there = known.get(place)
        if found_there is None:
            found_there = known[place] = stranded(dfa, *place)
        if found_there:
            out.append(int(t))
    return out
