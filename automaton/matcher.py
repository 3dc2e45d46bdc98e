"""The Matcher: one sequence's walk through the automaton, token by token, the one core under
every logits processor (``constrain.hf``, ``constrain.llama_cpp``, ``constrain.vllm``).

It owns the sequence's state, the EOS rule, rollback, forced bytes and the **wedge guard**, so
they behave the same in every integration. Nothing is raised into a generation loop:

- a token that cannot be walked (a bypassed mask, a special token) or an automaton limit
  (``AutomatonTooLarge``) leaves the state as it was, is logged once at error level, and marks the
  matcher *wedged*: its mask is EOS only from then on, so the sequence ends at the next step;
- EOS is accepted where the document is complete and *finishes* the sequence; EOS elsewhere (a
  bypassed mask) is the guard's case too, logged, and ends it;
- once finished or ended, further tokens (padding of a finished row in a batch) are ignored.
"""

from __future__ import annotations

import logging

import numpy as np

from . import keys
from .dfa import DEAD, AutomatonTooLarge
from .index import token_index

log = logging.getLogger("constrain")


class Matcher:
    """``Matcher(grammar, vocab)``: masks come from the index the grammar shares for that vocabulary."""

    __slots__ = ("index", "dfa", "program", "vocab", "state", "history", "wedged", "finished", "tokens", "key_states",
                 "let_repeat", "_repeats")

    def __init__(self, grammar, vocab, *, _index=None):
        self.index = _index or token_index(grammar, vocab)
        self.dfa = self.index.dfa
        self.program = self.dfa.program  # (asked each step whether it needs distinct strings)
        self.vocab = vocab
        if self.program.distinct_strings:
            keys.quoted_tokens(vocab)  # built once per vocabulary, with the index rather than at some token
        self.reset()

    def reset(self) -> None:
        self.state = self.dfa.start
        self.history: list[int] = []  # states before each accepted token
        self.wedged = False
        self.finished = False
        self.tokens: list[int] = []  # the tokens walked (EOS not), for the keys' walk (``keys.py``)
        self.key_states: list = [keys.START]  # the keys' walk after each of them, made as needed
        self.let_repeat = False  # a repeated key let through once (said once)
        self._repeats = (None, -1, [])  # (keys' walk, automaton state, ``_repeating`` there): mask and key ask both

    def fork(self) -> Matcher:
        """An independent copy (a beam or a sampled sibling that continues from here)."""
        twin = Matcher(None, self.vocab, _index=self.index)
        twin.state, twin.history = self.state, self.history.copy()
        twin.wedged, twin.finished = self.wedged, self.finished
        twin.tokens, twin.key_states, twin.let_repeat = self.tokens.copy(), self.key_states.copy(), self.let_repeat
        return twin

    @property
    def accepting(self) -> bool:
        return self.dfa.is_accepting(self.state)

    @property
    def done(self) -> bool:
        """Only EOS may follow (finished, or wedged by the guard)."""
        return self.wedged or self.finished

    def mask(self) -> np.ndarray:
        """A read-only bool array over the vocabulary: True where a token may come next."""
        if self.wedged or self.finished:
            return self.index.eos_only
        try:
            mask = self.index.mask(self.state)
        except AutomatonTooLarge as exc:  # a limit, not the caller's fault: end the sequence cleanly
            self.wedge(f"{exc}")
            return self.index.eos_only
        if self.program.distinct_strings:  # (most grammars: no walk of their strings)
            repeating = self._repeating(mask)
            if repeating:
                mask = mask.copy()
                mask[repeating] = False
                mask.flags.writeable = False
        return mask

    def _keys(self):
        """The walk of the strings kept so far (``keys.py``), None where the grammar has no need of
        distinct strings (a part lowered late may come to need them: the walk is made then)."""
        if not self.program.distinct_strings:
            return None
        walked = self.key_states
        while len(walked) <= len(self.tokens):
            n = len(walked) - 1
            walked.append(self._walk_keys(walked[-1], self.history[n], self.tokens[n], strict=False))
        return walked[-1]

    def _walk_keys(self, before, state: int, token_id: int, strict: bool = True):
        """The strings' walk past ``token_id``, read from automaton state ``state``."""
        data = self.vocab.token_bytes[token_id]
        return keys.walk(before, data, strict, keys.unique_opener(self.dfa, state, data))

    def _repeating(self, mask) -> list[int]:
        """The tokens ``mask`` allows that would close a key its object has, or a string its unique
        array has, or after which such a string can only be one of those (``keys.stranding``):
        none where taking them out would leave nothing (the strings that may come ran out: let
        through, said once)."""
        state = self._keys()
        if state is None:
            return []
        if self._repeats[0] is state and self._repeats[1] == self.state:
            return self._repeats[2]
        repeating = keys.repeating(self.dfa, self.state, state, mask, self.vocab)
        repeating += keys.stranding(self.dfa, self.state, state, mask, self.vocab)
        if repeating and np.count_nonzero(mask) == len(repeating):
            if not self.let_repeat:
                log.warning("constrain: only a key or unique item string written already can come next; "
                            "letting it repeat.")
            self.let_repeat = True
            repeating = []
        self._repeats = (state, self.state, repeating)
        return repeating

    def mask_state(self) -> int | None:
        """The state whose mask ``mask()`` returns (``TokenIndex.shared_state``: counts far from a
        bound share one); None once only EOS may follow."""
        if self.wedged or self.finished:
            return None
        try:
            shared = self.index.shared_state(self.state)
        except AutomatonTooLarge as exc:
            self.wedge(f"{exc}")
            return None
        if self.program.distinct_strings:  # its own mask where a string may repeat
            repeating = self._repeating(self.index.mask(self.state))
            return (shared, *repeating) if repeating else shared
        return shared

    def try_walk(self, token_id: int) -> int:
        """The state after ``token_id`` (``DEAD`` if it cannot be walked), without moving."""
        if self.finished or not 0 <= token_id < self.index.size:
            return DEAD
        data = self.vocab.token_bytes[token_id]
        if not data:
            return DEAD
        return self.dfa.walk(data, self.state)

    def advance(self, token_id: int) -> bool:
        """Commit ``token_id``: True when the grammar (or the EOS rule) accepts it."""
        if self.finished:
            return False  # the sequence is over: padding after EOS changes nothing
        if token_id in self.vocab.eos_ids and not self.vocab.token_bytes[token_id]:
            if self.accepting or self.wedged:
                self.history.append(self.state)
                self.finished = True
                return not self.wedged
            self.wedge(f"EOS (token {token_id}) before the document is complete")
            self.finished = True
            return False
        if self.wedged:
            return False
        try:
            nxt = self.try_walk(token_id)
        except AutomatonTooLarge as exc:
            self.wedge(f"{exc}")
            return False
        if nxt == DEAD:
            data = self.vocab.token_bytes[token_id] if 0 <= token_id < len(self.vocab.token_bytes) else None
            self.wedge(f"sampled token {token_id} ({data!r}) cannot follow automaton state {self.state} "
                        f"after {len(self.history)} tokens; the mask was bypassed")
            return False
        if self.program.distinct_strings:
            before = self._keys()
            after = self._walk_keys(before, self.state, token_id)
            if after is keys.REPEATED and token_id in self._repeating(self.index.mask(self.state)):
                self.wedge(f"sampled token {token_id} ({self.vocab.token_bytes[token_id]!r}) writes a key or unique "
                           f"item string a second time, after {len(self.history)} tokens; the mask was bypassed")
                return False
            self.key_states.append(self._walk_keys(before, self.state, token_id, strict=False)
                                   if after is keys.REPEATED else after)  # (a repeat let through: passed over)
        self.history.append(self.state)
        self.tokens.append(token_id)
        self.state = nxt
        return True

    def wedge(self, why: str) -> None:
        """The guard: keep the last valid state, say ``why`` once, allow only EOS from here."""
        if not self.wedged:
            log.error("constrain: %s. Keeping the last valid state and allowing only EOS.", why)
        self.wedged = True

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens (EOS included); a wedge is forgotten."""
        if n < 0 or n > len(self.history):
            raise ValueError(f"cannot roll back {n} tokens: {len(self.history)} accepted")
        for _ in range(n):
            if self.finished:
                self.finished = False
                self.history.pop()
            else:
                self.state = self.history.pop()
                self.tokens.pop()
        del self.key_states[len(self.tokens) + 1:]
        self.wedged = False

    def forced_bytes(self) -> bytes:
        """Bytes every continuation must start with (empty when there is a choice or EOS is allowed)."""
        out = bytearray()
        s = self.state
        if self.done:
            return b""
        while not self.dfa.is_accepting(s) and len(out) < 4096:
            targets, picks = self.dfa.parts(s)
            read = [b for b, k in enumerate(picks) if k]
            if len(read) != 1:
                break
            s = targets[picks[read[0]]]
            out.append(read[0])
        return bytes(out)
