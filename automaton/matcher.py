"""The Matcher: one sequence's walk through the automaton, token by token.

It never raises into a generation loop: a token that cannot be walked leaves the state as it was,
returns False and marks the matcher *wedged*; a wedged matcher allows only EOS, so the caller can
end the sequence cleanly.
"""

from __future__ import annotations

import numpy as np

from .dfa import DEAD
from .index import token_index


class Matcher:
    """``Matcher(grammar, vocab)``: masks come from the index the grammar shares for that vocabulary."""

    def __init__(self, grammar, vocab):
        self.index = token_index(grammar, vocab)
        self.dfa = self.index.dfa
        self.vocab = vocab
        self.reset()

    def reset(self) -> None:
        self.state = self.dfa.start
        self.history: list[int] = []  # states before each accepted token
        self.wedged = False
        self.finished = False

    @property
    def accepting(self) -> bool:
        return self.dfa.is_accepting(self.state)

    def mask(self) -> np.ndarray:
        if self.wedged or self.finished:
            return self.index.eos_only
        return self.index.mask(self.state)

    def try_walk(self, token_id: int) -> int:
        """The state after ``token_id`` (``DEAD`` if it cannot be walked), without moving."""
        if self.finished or not 0 <= token_id < self.index.size:
            return DEAD
        data = self.vocab.token_bytes[token_id]
        if not data:
            return DEAD
        return self.dfa.walk(data, self.state)

    def advance(self, token_id: int) -> bool:
        """Commit ``token_id``; EOS is accepted in accepting states and ends the sequence."""
        if self.wedged:
            return False
        if token_id in self.vocab.eos_ids and not self.vocab.token_bytes[token_id]:
            if self.accepting and not self.finished:
                self.history.append(self.state)
                self.finished = True
                return True
            self.wedged = True
            return False
        nxt = self.try_walk(token_id)
        if nxt == DEAD:
            self.wedged = True
            return False
        self.history.append(self.state)
        self.state = nxt
        return True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens (EOS included)."""
        if n < 0 or n > len(self.history):
            raise ValueError(f"cannot roll back {n} tokens: {len(self.history)} accepted")
        for _ in range(n):
            if self.finished:
                self.finished = False
                self.history.pop()
            else:
                self.state = self.history.pop()
        self.wedged = False

    def forced_bytes(self) -> bytes:
        """Bytes every continuation must start with (empty when there is a choice or EOS is allowed)."""
        out = bytearray()
        s = self.state
        while not self.dfa.is_accepting(s) and len(out) < 4096:
            targets, picks = self.dfa.parts(s)
            read = [b for b, k in enumerate(picks) if k]
            if len(read) != 1:
                break
            s = targets[picks[read[0]]]
            out.append(read[0])
        return bytes(out)
