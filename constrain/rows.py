"""The core both logits processors share: one automaton state per row, keyed by the row's tokens.

A row's state is found from the tokens it generated, not from its position in the batch, so beam
search may reorder, duplicate or drop rows between steps and every row still finds its state:
the previous step's table holds its prefix, and one token walks it forward.

The wedge guard lives here: a sampled token the automaton cannot walk (the mask was bypassed by a
later processor, or a special token slipped through) is logged once at error level; the row keeps
its last valid state and may only end (EOS) from then on. Nothing is raised into the generation
loop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from automaton.dfa import DEAD, AutomatonTooLarge
from automaton.index import token_index

log = logging.getLogger("constrain")

OK, WEDGED, FINISHED = "ok", "wedged", "finished"


@dataclass(frozen=True)
class Row:
    state: int
    status: str = OK


class RowTracker:
    def __init__(self, grammar, vocab):
        self.grammar = grammar
        self.vocab = vocab
        self.index = token_index(grammar, vocab)
        self.reset()

    def reset(self) -> None:
        self._table: dict[tuple[int, ...], Row] = {(): Row(self.index.dfa.start)}

    def rows(self, generated: list[tuple[int, ...]]) -> list[Row]:
        """The row states for this step's generated-token tuples (one walk per new token)."""
        table: dict[tuple[int, ...], Row] = {}
        out = []
        for key in generated:
            row = table.get(key) or self._table.get(key)
            if row is None:
                parent = self._table.get(key[:-1]) or table.get(key[:-1])
                if parent is None:  # a sequence we never saw: replay it from the start
                    parent = self._replay(key[:-1])
                row = self._step(parent, key[-1], key)
            table[key] = row
            out.append(row)
        self._table = table
        return out

    def _replay(self, tokens: tuple[int, ...]) -> Row:
        row = Row(self.index.dfa.start)
        for i, t in enumerate(tokens):
            row = self._step(row, t, tokens[: i + 1])
        return row

    def _step(self, row: Row, token: int, key: tuple[int, ...]) -> Row:
        if row.status != OK:
            return Row(row.state, FINISHED if token in self.vocab.eos_ids else row.status)
        dfa = self.index.dfa
        if token in self.vocab.eos_ids and dfa.is_accepting(row.state):
            return Row(row.state, FINISHED)
        data = self.vocab.token_bytes[token] if 0 <= token < len(self.vocab.token_bytes) else None
        try:
            nxt = dfa.walk(data, row.state) if data else DEAD
        except AutomatonTooLarge as exc:  # a limit, not a bug in the caller: end the row cleanly
            log.error("constrain: %s; allowing only EOS from here.", exc)
            return Row(row.state, WEDGED)
        if nxt == DEAD:
            log.error("constrain: sampled token %d (%r) cannot follow automaton state %d after %d tokens; "
                      "the mask was bypassed. Keeping the last valid state and allowing only EOS.",
                      token, data, row.state, len(key) - 1)
            return Row(row.state, WEDGED)
        return Row(nxt)

    def mask(self, row: Row) -> np.ndarray:
        if row.status != OK:
            return self.index.eos_only
        try:
            return self.index.mask(row.state)
        except AutomatonTooLarge as exc:
            log.error("constrain: %s; allowing only EOS from here.", exc)
            return self.index.eos_only
