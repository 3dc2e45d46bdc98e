"""Distinct keys: the keys each open JSON object has so far, so that no key is written twice.

A grammar lets a key it does not name repeat (``{"a": 1, "a": 2}``): which keys are distinct is
no regular language. Parsers keep the last value, so where the grammar counts members
(``minProperties`` beside free keys) or asks some member to be a witness (a ``not`` of
``additionalProperties``, a ``oneOf`` decided member by member), a repeated key would pass text
whose document is invalid. Such a grammar says so (``Program.distinct_keys``), and its matchers
walk this small JSON lexer beside the automaton: a token that would close a key the object
already has is taken out of the mask, and walking one wedges the sequence. Where an object's
free keys run out (a finite set of them, all written: the mask would hold nothing), the repeat is
let through and logged once.

A walk's state is a tuple, kept per token for rollback: ``(frames, mode, key)``, where ``frames``
holds per open container a frozenset of its keys (None for an array), ``mode`` says where in the
text the walk is, and ``key`` is the raw bytes of the key being written.
"""

from __future__ import annotations

import json

import numpy as np

OUTSIDE, EXPECT_KEY, IN_KEY, KEY_ESCAPE, IN_STRING, STRING_ESCAPE = range(6)
START = ((), OUTSIDE, b"")
REPEATED = None  # the walk of a token that closes a key its object has already
_QUOTE, _BACKSLASH = ord('"'), ord("\\")


def walk(state, data: bytes, strict: bool = True):
    """The state after ``data``, or ``REPEATED`` where it closes a key already written
    (``strict``; else the key is passed over)."""
    frames, mode, key = state
    for b in data:
        if mode == IN_STRING:
            if b == _QUOTE:
                mode = OUTSIDE
            elif b == _BACKSLASH:
                mode = STRING_ESCAPE
        elif mode == IN_KEY:
            if b == _QUOTE:
                name = _decoded(key)
                if name in frames[-1]:
                    if strict:
                        return REPEATED
                else:
                    frames = frames[:-1] + (frames[-1] | {name},)
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
        elif b == _QUOTE:
            mode = IN_KEY if mode == EXPECT_KEY else IN_STRING
        elif b == 0x7B:  # {
            frames, mode = frames + (frozenset(),), EXPECT_KEY
        elif b == 0x5B:  # [
            frames, mode = frames + (None,), OUTSIDE
        elif b in (0x7D, 0x5D):  # } ]
            frames, mode = frames[:-1], OUTSIDE
        elif b == 0x2C:  # ,
            mode = EXPECT_KEY if frames and frames[-1] is not None else OUTSIDE
        elif b == 0x3A:  # :
            mode = OUTSIDE
    return frames, mode, key


def _decoded(raw: bytes) -> str:
    """A key's text as a parser reads it (a malformed one as its bytes: the automaton refuses it)."""
    try:
        return json.loads(b'"' + raw + b'"')
    except ValueError:
        return raw.decode("utf-8", "replace")


def may_repeat(state) -> bool:
    """Whether some token could close a key already written from ``state``: an object open
    somewhere with a key in it (a token may close a value, an object and begin a key)."""
    return any(frame for frame in state[0])


class QuotedTokens:
    """A vocabulary's tokens holding a quote (the only ones that can close a key): by how many,
    and those with one by the bytes before it (what they add to a key they close)."""

    def __init__(self, token_bytes):
        counts = np.array([data.count(b'"') if data else 0 for data in token_bytes], dtype=np.int32)
        self.one = np.flatnonzero(counts >= 1)
        self.two = np.flatnonzero(counts >= 2)
        self.three = np.flatnonzero(counts >= 3)
        by_head: dict[bytes, list[int]] = {}
        for t in self.one:
            by_head.setdefault(token_bytes[t].split(b'"', 1)[0], []).append(int(t))
        self.by_head = {head: np.array(ids) for head, ids in by_head.items()}
        self.escaping = np.array([t for head, ids in by_head.items() if b"\\" in head for t in ids], dtype=np.int64)

    def candidates(self, state) -> np.ndarray:
        """Tokens that might close a key already written from ``state``: inside a plain key, those
        that spell the rest of one of its object's keys and a quote (or close a key further on);
        inside a key with escapes, any with a quote; elsewhere one quote to open a key and one to
        close it (and one more to leave a string first)."""
        frames, mode, key = state
        if mode == IN_KEY and b"\\" not in key:
            spelled = [json.dumps(name, ensure_ascii=False)[1:-1].encode() for name in frames[-1]]
            if all(name.isascii() and b"\\" not in s for name, s in zip(frames[-1], spelled)):
                found = [self.by_head.get(s[len(key):]) for s in spelled if s.startswith(key)]
                # (and those spelling the rest with escapes, or closing a key further on)
                return np.concatenate([f for f in found if f is not None] + [self.escaping, self.three])
        if mode in (IN_KEY, KEY_ESCAPE):
            return self.one
        return self.three if mode in (IN_STRING, STRING_ESCAPE) else self.two


_QUOTED: dict[str, QuotedTokens] = {}  # per vocabulary fingerprint (a process serves a few)


def quoted_tokens(vocab) -> QuotedTokens:
    key = vocab.fingerprint()
    found = _QUOTED.get(key)
    if found is None:
        if len(_QUOTED) >= 8:
            _QUOTED.pop(next(iter(_QUOTED)))
        found = _QUOTED[key] = QuotedTokens(vocab.token_bytes)
    return found


def repeating(state, mask: np.ndarray, vocab) -> list[int]:
    """The tokens ``mask`` allows that would close a key already written (``walk`` each)."""
    if not may_repeat(state):
        return []
    candidates = quoted_tokens(vocab).candidates(state)
    token_bytes = vocab.token_bytes
    return [int(t) for t in candidates[mask[candidates]] if walk(state, token_bytes[t]) is REPEATED]
