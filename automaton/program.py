"""A byte NFA made of fragments that call each other: the compiled form of a schema.

Each schema node that is shared (a ``$ref`` target, a property value, an array item) becomes a
fragment, entered from its start state and left from its final state. A call edge records where to
resume, so one fragment serves every place that uses it without being copied, and recursive
``$ref`` cycles need no unrolling. Recursion is bounded: a stack holds at most ``max_depth`` frames of
fragments that lie on a call cycle, so the set of configurations stays finite.

``live(depth)`` says which states can still reach their fragment's final state when at most
``depth`` more recursive frames may be pushed; the determiniser only ever enters live states,
which is what makes every reachable state of the automaton completable (no dead ends). A block of
states known to finish exactly when one witness state does (``finishes_like``: a long ``maxLength``
string is tens of thousands of states) is settled by that witness, and its edges are not analysed.
A counted block (``automaton.counted``) is not even written: its states are numbered after the
written ones and made when asked for, and its liveness is arithmetic.

A fragment may also *wait* (``defer``): it is lowered when the automaton first enters it
(``enter``), into a segment of new states numbered after all the others, whose liveness is computed
then, with the rest of the program's fixed. The compiler defers only fragments that lie on no call
cycle and surely can finish (``compiler.deferral``), so their starts are live before they exist.
Or its start's liveness *stands in* (``stand_in``): what is written in it now is never walked, only
read for liveness, a lower bound of what it is once lowered (a set of an object's names written).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .collector import collector_paused
from .counted import CountedBlock, Rows


STAND_IN = "stand-in"  # ``waiting``'s word for a fragment whose written body stands in for its liveness
COUNTED_SHARE = 8
"""Counted states weighing as one written state against ``max_states``: a written state holds its
rows (tuples of edges, epsilon moves, calls), a counted one only its flags (about five bytes:
liveness, finality, depth cost); a ``maxLength: 32767`` string of a 31-state pattern is a
million of them, 5 MB, where a million written states would be hundreds."""


class ProgramTooLarge(Exception):
    """Raised by ``new_state`` when the state budget is spent; the compiler words it for the user."""


@dataclass
class Fragment:
    start: int
    final: int
    counted: bool = True  # its frames count against max_depth when it is recursive
    recursive: bool = False

    @property
    def costs_depth(self) -> bool:
        return self.recursive and self.counted


class Program:
    def __init__(self, max_states: int = 1_000_000, max_depth: int = 8):
        self.max_states = max_states
        self.max_depth = max_depth
        # per state, lists while building and tuples after ``finish``
        self.edges: list = []  # (lo, hi, target): inclusive byte ranges
        self.eps: list = []
        self.calls: list = []  # (fragment, return state)
        self.owner: list[int] = []
        self.fragments: list[Fragment] = []
        self.root = -1
        self.blocks: list[tuple[int, int, int]] = []  # (first, stop, witness): see finishes_like
        self.plain_forever: set[int] = set()  # the written states of reads_plain_forever
        self.counted: list[CountedBlock] = []  # numbered after the written states by ``finish``
        self._entries: list[tuple[int, CountedBlock]] = []
        self._counted_states = 0
        self._counted_weight = 0  # what the counted blocks weigh against ``max_states`` (``COUNTED_SHARE``)
        self._live: list[bytearray] | None = None
        self._stable = False  # the liveness levels reached their fixpoint before ``max_depth``
        self.included = 0  # states taken from a prelude (``include``), numbered first
        self._base: Program | None = None  # that prelude, when its liveness is settled (``settle``)
        # waiting fragments -> whether they can finish with no recursive frame to spare (``defer``),
        # or ``STAND_IN`` (``stand_in``)
        self.waiting: dict[int, bool | str] = {}
        self.expander = None  # (program, fragment, start, final) -> None: writes a waiting fragment's body
        self.distinct_strings = False  # a key or unique item written twice could pass an invalid document (``keys.py``)
        self.unique_opens: set[int] = set()  # the states a uniqueItems array of strings opens into (``keys.py``)
        self.block_starts: list[int] = []  # each counted block's first state, in order
        # per state, after ``finish``: whether it pushes a depth-costing frame, ends its fragment, and
        # reads bytes only (its closure is itself); grown with every segment
        self.costs = self.is_final = self.simple = bytearray()

    # -- building ---------------------------------------------------------------------------
    def include(self, base: Program) -> None:
        """Start with ``base``'s states and fragments, numbered as there (on an empty program): a
        prelude written once per process, whose rows (tuples) every program including it shares.
        When ``base`` is settled (``settle``), its recursion and liveness are taken as they are:
        it calls nothing outside itself, so the program's analysis starts past it."""
        assert not self.edges, "include() starts a program"
        self.edges, self.eps, self.calls = list(base.edges), list(base.eps), list(base.calls)
        self.owner = list(base.owner)
        self.fragments = [Fragment(f.start, f.final, f.counted, f.recursive) for f in base.fragments]
        self.blocks = list(base.blocks)
        self.included = len(base.owner)
        self._base = base if base._stable else None

    def settle(self) -> None:
        """Mark recursion and compute liveness of a program with no root (a prelude), for the
        programs that include it; rows must already be tuples, and no block counted."""
        assert not self.counted, "a prelude with counted blocks"
        self.edges, self.eps, self.calls, self.owner = map(tuple, (self.edges, self.eps, self.calls, self.owner))
        self._live = self._liveness()
        self._set_flags()

    def new_state(self, fragment: int) -> int:
        state = len(self.owner)
        if state + self._counted_weight >= self.max_states:
            raise ProgramTooLarge(f"more than {self.max_states} automaton states")
        self.edges.append([])
        self.eps.append([])
        self.calls.append([])
        self.owner.append(fragment)
        return state

    def new_states(self, fragment: int, count: int) -> range:
        """``count`` new states of ``fragment`` at once (a scalar automaton's states)."""
        if len(self.edges) + self._counted_weight + count > self.max_states:
            raise ProgramTooLarge(f"more than {self.max_states} automaton states")
        first = len(self.edges)
        self.edges += [[] for _ in range(count)]
        self.eps += [[] for _ in range(count)]
        self.calls += [[] for _ in range(count)]
        self.owner.extend([fragment] * count)
        return range(first, first + count)

    def new_fragment(self, counted: bool = True) -> int:
        """A fragment; ``counted=False`` for pieces that always sit inside a counted one on a cycle."""
        index = len(self.fragments)
        self.fragments.append(Fragment(-1, -1, counted))
        frag = self.fragments[index]
        frag.start = self.new_state(index)
        frag.final = self.new_state(index)
        return index

    def byte(self, src: int, lo: int, hi: int, dst: int) -> None:
        self.edges[src].append((lo, hi, dst))

    def text(self, src: int, data: bytes, dst: int) -> None:
        """A fixed byte string from ``src`` to ``dst``: a chain whose states finish exactly when
        ``dst`` does (``finishes_like``), so liveness skips them (most written states are the
        letters of property names)."""
        if len(data) < 2:
            if data:
                self.edges[src].append((data[0], data[0], dst))
            else:
                self.eps[src].append(dst)
            return
        chain = self.new_states(self.owner[src], len(data) - 1)
        edges = self.edges
        for i, b in enumerate(data):
            edges[src].append((b, b, dst if i == len(chain) else chain[i]))
            src = chain[i] if i < len(chain) else dst
        self.finishes_like(chain, dst)

    def epsilon(self, src: int, dst: int) -> None:
        self.eps[src].append(dst)

    def call(self, src: int, fragment: int, dst: int) -> None:
        self.calls[src].append((fragment, dst))

    def finishes_like(self, states: range, witness: int) -> None:
        """Declare that each of ``states`` (consecutive, none a fragment's start or final) can finish
        exactly when ``witness`` can, with no recursive frame of its own: its edges stay inside the
        block, lead to ``witness``, or call fragments that call nothing (a trimmed scalar automaton
        whose accepting states lead to ``witness``). Liveness then skips the block's edges."""
        if len(states):
            self.blocks.append((states.start, states.stop, witness))

    def defer(self, fragment: int, shallow: bool) -> None:
        """Let ``fragment`` (created, nothing written) be lowered when first entered: it calls no
        fragment on a cycle and can finish, with no recursive frame to spare when ``shallow`` (else
        with one: the recursive "any value" it may call), which its start's liveness assumes."""
        self.waiting[fragment] = shallow

    def stand_in(self, fragment: int) -> None:
        """Let ``fragment`` be lowered when first entered, what is written in it now standing in
        for its liveness: never walked, it must finish nowhere the lowered fragment cannot (each
        ``enter`` checks so at every depth), and call what the lowered fragment will (so that call
        cycles through it are known at ``finish``); it and what it makes count no frames."""
        self.waiting[fragment] = STAND_IN

    def counted_block(self, src: int, block: CountedBlock) -> None:
        """Enter ``block`` from ``src`` (an epsilon move to its start once it is numbered)."""
        self._counted_states += block.size
        self._counted_weight += -(-block.size // COUNTED_SHARE)
        if len(self.edges) + self._counted_weight > self.max_states:
            raise ProgramTooLarge(f"more than {self.max_states} automaton states")
        self.counted.append(block)
        self._entries.append((src, block))

    def reads_plain_forever(self, states) -> None:
        """Declare that from each of ``states`` any plain text (``automaton.plain``) is read, however
        long, staying among them (an additional key's states, a pattern's ``.*``): the token index
        takes it as their room without exploring them."""
        self.plain_forever.update(states)

    def reads_forever(self, s: int) -> bool:
        """Whether any plain text is read from state ``s`` forever: a declared state, or a
        repeating counted block's state that its template says does (looked up, not listed)."""
        if s in self.plain_forever:
            return True
        block = self.block_at(s)
        return block is not None and block.reads_forever(s)

    @property
    def size(self) -> int:
        """States, written and counted."""
        return len(self.owner) + self._counted_states

    @property
    def weight(self) -> int:
        """What the program weighs against ``max_states``: its written states, and its counted
        ones at one in ``COUNTED_SHARE``."""
        return len(self.owner) + self._counted_weight

    @property
    def written(self) -> int:
        """States written out (numbered first; the counted blocks' follow)."""
        return len(self.owner)

    def written_rows(self) -> tuple[tuple, tuple, tuple]:
        """The edges, epsilon moves and calls of the states written at compile (after ``finish``)."""
        if not isinstance(self.edges, Rows):
            return self.edges, self.eps, self.calls
        return self.edges.written, self.eps.written, self.calls.written

    def block_at(self, s: int) -> CountedBlock | None:
        """The counted block holding state ``s``, if one does."""
        i = bisect_right(self.block_starts, s) - 1
        if i < 0 or s < self.written:
            return None
        block = self.counted[i]
        return block if s < block.first + block.size else None

    # -- waiting fragments ------------------------------------------------------------------
    def enter(self, g: int) -> None:
        """Lower fragment ``g`` now if it waits (the automaton is about to enter it): its body is
        written into a segment of new states, its start and final moved there. Callers hold the
        automaton's lock; readers without it (the room analysis) never see half a segment."""
        shallow = self.waiting.pop(g, None)
        if shallow is None:
            return
        first, n_frags, n_counted, n_blocks = self.size, len(self.fragments), len(self.counted), len(self.blocks)
        segment = self._segment(first)
        with collector_paused():  # as a compile is: a segment is thousands of new small objects
            start, final = segment.new_state(g), segment.new_state(g)
            self.expander(segment, g, start, final)
            rows, live = self._close_segment(segment, first, n_frags, n_counted, n_blocks, g, start, final)
        for table, written in zip((self.edges, self.eps, self.calls), rows):
            table.grow(first, written)
        done: set[int] = set()
        for d, level in enumerate(self._live):  # levels that agree are one object: grown once
            if id(level) not in done:
                done.add(id(level))
                level += live[min(d, len(live) - 1)]
        self._counted_states += len(live[0])
        frag = self.fragments[g]
        frag.start, frag.final = start, final

    def _segment(self, first: int) -> Program:
        """This program as the lowering writes a segment into it: tables of its own for the states
        from ``first`` on; the fragments, blocks and declarations shared."""
        segment = object.__new__(Program)  # not copy.copy: pickling's hook would expand everything
        segment.__dict__.update(self.__dict__)
        segment.edges, segment.eps, segment.calls, segment.owner = (_Tail(first) for _ in range(4))
        segment._counted_states, segment._counted_weight, segment._entries = 0, 0, []
        segment.max_states = 1 << 62  # ``compiler.deferral`` vouched for the size of what waits
        return segment

    def _close_segment(self, segment: Program, first: int, n_frags: int, n_counted: int, n_blocks: int, g: int,
                       start: int, final: int) -> tuple[tuple, list[bytearray]]:
        """Number the segment's counted blocks, freeze its rows, grow the per-state flags and
        compute its liveness at every depth the program has levels for (its fragments count no
        frames); return its rows and those levels."""
        written = len(segment.owner)
        nxt = written
        for block in self.counted[n_counted:]:
            block.first, nxt = nxt, nxt + block.size
            self.block_starts.append(block.first)
        for src, block in segment._entries:
            segment.eps[src].append(block.entry)
        rows = tuple(tuple(map(tuple, table)) for table in (segment.edges, segment.eps, segment.calls))
        new = self.fragments[n_frags:]
        assert not any(f.costs_depth for f in new), "a waiting fragment made a fragment that counts frames"
        finals = [final] + [f.final for f in new]
        self.costs += bytes(nxt - first)
        is_final = bytearray(nxt - first)
        for t in finals:
            is_final[t - first] = 1
        self.is_final += is_final
        self.simple += bytes(_simple(*rows, is_final)) + bytes(nxt - written)
        waiting = [(f.start, self.waiting[g2]) for g2, f in enumerate(new, n_frags) if g2 in self.waiting]
        seeds = [finals + [t for t, shallow in waiting if shallow is True], [t for t, shallow in waiting if shallow is False]]
        seeds += [[]] * (len(self._live) - 2)  # deeper levels grow only by what they may call
        live = self._segment_live(first, nxt, rows, n_frags, n_counted, n_blocks, seeds[: len(self._live)])
        old = self.fragments[g].start
        for d, level in enumerate(live):
            if self._live[d][old] and not level[start - first]:
                raise RuntimeError(f"internal error: fragment {g} was deferred but cannot finish at depth {d}")
        return rows, live

    def _segment_live(self, first: int, stop: int, rows: tuple, n_frags: int, n_counted: int, n_blocks: int,
                      seeds: list[list[int]]) -> list[bytearray]:
        """Which of a new segment's states ``first..stop`` can finish their fragment at each depth
        (``seeds[d]``: states live from depth ``d`` on), the older states' levels as they are:
        ``_liveness`` for one segment, its graph built once and each level grown from the one below.
        A level whose view of the older states is the one below's is that level (what calls only
        the free "any value" has two levels to compute, however deep the program's recursion)."""
        edges, eps, calls = rows
        old = self._live
        frags = self.fragments
        rep: dict[int, int] = {}  # a block's states are represented by its (settled) witness
        blocks = self.blocks[n_blocks:]
        for b0, b1, witness in blocks:
            rep.update(dict.fromkeys(range(b0, b1), witness))
        for s, w in rep.items():
            while w in rep and rep[w] != w:
                w = rep[w]
            rep[s] = w
        rep = {s: w for s, w in rep.items() if s != w}
        counted = self.counted[n_counted:]
        for block in counted:  # entered at its start, which finishes when its exit does
            rep[block.entry] = rep.get(block.exit, block.exit)
        size = stop - first
        preds: list[list[int]] = [[] for _ in range(size)]  # by state - first, as the others
        to_old: list[tuple[int, int]] = []  # (state, older state it moves to)
        old_calls: dict[int, list[tuple[int, int]]] = {}  # return state -> (caller, older fragment)
        by_return: dict[int, list[tuple[int, int]]] = {}  # the same for the segment's own fragments
        by_callee: dict[int, list[tuple[int, int]]] = {}
        for s, s_edges, s_eps, s_calls in zip(range(first, stop), edges, eps, calls):
            if rep and s in rep:
                continue
            targets = [t for _, _, t in s_edges]
            targets += s_eps
            for t in [rep.get(t, t) for t in targets] if rep else targets:
                if t < first:
                    to_old.append((s, t))
                else:
                    preds[t - first].append(s)
            for g, r in s_calls:
                r = rep.get(r, r)
                if frags[g].start >= first:  # a fragment of this segment: its start is settled here
                    by_return.setdefault(r, []).append((s, g))
                    by_callee.setdefault(g, []).append((s, r))
                else:
                    old_calls.setdefault(r, []).append((s, g))
        starts = {frags[g].start: g for g in range(n_frags, len(frags))}
        levels: list[bytearray] = []
        seen_as = None
        old_ends = [t for _, t in to_old] + [rep.get(w, w) for _, _, w in blocks] + [rep.get(b.exit, b.exit) for b in counted]
        old_ends = [t for t in old_ends if t < first]
        for d, level_seeds in enumerate(seeds):
            old_d, below = old[d], old[d - 1] if d else None
            enters = {g: (below is not None and below[frags[g].start]) if frags[g].costs_depth else old_d[frags[g].start]
                      for pairs in old_calls.values() for _, g in pairs}
            view = (tuple(enters.values()), bytes(old_d[t] for t in old_ends))
            if d > 1 and not level_seeds and view == seen_as:
                levels.append(levels[-1])
                continue
            seen_as = view
            live = bytearray(levels[-1]) if levels else bytearray(size)
            todo = list(level_seeds)
            todo += [s for s, t in to_old if old_d[t]]
            if d:  # what depth 1 lets in anew
                todo += [s for r, pairs in old_calls.items() if live[r - first] for s, g in pairs if enters[g]]
            todo = [t for t in todo if not live[t - first]]
            for t in todo:
                live[t - first] = 1
            while todo:
                t = todo.pop()
                for s in preds[t - first]:
                    if not live[s - first]:
                        live[s - first] = 1
                        todo.append(s)
                for s, g in old_calls.get(t, ()):
                    if enters[g] and not live[s - first]:
                        live[s - first] = 1
                        todo.append(s)
                for s, g in by_return.get(t, ()):
                    if live[frags[g].start - first] and not live[s - first]:
                        live[s - first] = 1
                        todo.append(s)
                g = starts.get(t)
                if g is not None:
                    for s, r in by_callee.get(g, ()):
                        if live[r - first] and not live[s - first]:
                            live[s - first] = 1
                            todo.append(s)
            for b0, b1, witness in blocks:
                w = rep.get(witness, witness)
                if live[w - first] if w >= first else old_d[w]:
                    live[b0 - first:b1 - first] = b"\x01" * (b1 - b0)
            for block in counted:
                x = rep.get(block.exit, block.exit)
                if live[x - first] if x >= first else old_d[x]:
                    live[block.first - first:block.first - first + block.size] = block.live_bytes()
            levels.append(live)
        return levels

    def expand_all(self) -> None:
        """Lower every waiting fragment (before pickling: a pickled program is whole)."""
        while self.waiting:
            self.enter(next(iter(self.waiting)))

    def __getstate__(self):
        self.expand_all()
        return {**self.__dict__, "expander": None}

    # -- analysis ---------------------------------------------------------------------------
    def finish(self, root: int) -> None:
        """Mark recursive fragments and compute liveness; call once, after building."""
        self.root = root
        first = len(self.owner)
        for block in self.counted:
            block.first, first = first, first + block.size
        for src, block in self._entries:
            self.eps[src].append(block.entry)
        # frozen into tuples of tuples: the garbage collector stops tracking them (a list of a
        # million states would be walked by every full collection, tens of milliseconds each); a
        # settled prelude's rows are tuples already, taken as one
        skip, base = self._settled, self._base
        self.edges, self.eps, self.calls = (whole + tuple(map(tuple, rows[skip:])) for rows, whole in zip(
            (self.edges, self.eps, self.calls), (base.edges, base.eps, base.calls) if base else ((), (), ())))
        self.owner = tuple(self.owner)
        self._live = self._liveness()
        self.block_starts = [block.first for block in self.counted]
        self._set_flags()
        self._base = None  # read by the analysis only (a pickled grammar need not carry it)
        if self.counted or self.waiting:
            self.edges, self.eps, self.calls = (Rows(rows, self.counted, self.block_starts, kind) for rows, kind in (
                (self.edges, "edges_of"), (self.eps, "eps_of"), (self.calls, "calls_of")))

    def _set_flags(self) -> None:
        """Per state: whether it pushes a depth-costing frame, ends its fragment, and reads bytes
        only; a settled prelude's taken as they are."""
        skip, base = self._settled, self._base
        costly = [f.costs_depth for f in self.fragments]
        costs = bytearray(map(costly.__getitem__, self.owner[skip:])) + b"".join(
            (b"\x01" if costly[block.owner] else b"\x00") * block.size for block in self.counted)
        is_final = bytearray(self.size - skip)
        for f in self.fragments[len(base.fragments) if base else 0:]:
            is_final[f.final - skip] = 1
        simple = bytearray(_simple(self.edges[skip:], self.eps[skip:], self.calls[skip:], is_final))
        simple += bytes(self.size - self.written)
        if base is not None:
            costs, is_final, simple = base.costs + costs, base.is_final + is_final, base.simple + simple
        self.costs, self.is_final, self.simple = costs, is_final, simple

    def _mark_recursive(self, succ: list[set[int]]) -> None:
        """A fragment is recursive when it can reach a call to itself (Tarjan's SCC, iterative);
        ``succ``: the fragments each calls."""
        n = len(self.fragments)
        # a settled prelude's fragments keep their marks: they call nothing outside it, so no cycle
        # of the program's passes through them
        known = len(self._base.fragments) if self._base is not None else 0
        for block in self.counted:  # a string's calls its scalars' spellings; an array's, its item
            succ[block.owner].update(block.fragments)
        if known:
            prelude = range(known)
            for callees in succ:
                callees.difference_update(prelude)
        index = [-1] * n
        low = [0] * n
        on_stack = [False] * n
        stack: list[int] = []
        counter = 0
        for root in range(known, n):
            if index[root] != -1:
                continue
            work = [(root, iter(succ[root]))]
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack[root] = True
            while work:
                v, it = work[-1]
                advanced = False
                for w in it:
                    if index[w] == -1:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on_stack[w] = True
                        work.append((w, iter(succ[w])))
                        advanced = True
                        break
                    if on_stack[w]:
                        low[v] = min(low[v], index[w])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack[w] = False
                        component.append(w)
                        if w == v:
                            break
                    cyclic = len(component) > 1 or v in succ[v]
                    for w in component:
                        self.fragments[w].recursive = cyclic
                    if cyclic and not any(self.fragments[w].counted for w in component):
                        raise ValueError("a call cycle with no counted fragment would be unbounded")

    def _liveness(self) -> list[bytearray]:
        """``live[d][s]``: state ``s`` can finish its fragment with ``d`` recursive frames to spare.

        Level ``d`` needs, of level ``d - 1``, only which depth-costing fragments can start; levels
        only grow, so each is level ``d - 1`` plus what the newly callable fragments make live, and
        once no fragment becomes callable every higher level equals the last one computed.
        """
        n = len(self.edges)
        base = self._base
        skip = self._settled  # a settled prelude's states: its levels
        rep = list(range(n))  # a block's states are represented by its witness
        own_blocks = [b for b in self.blocks if b[0] >= skip]
        for first, stop, witness in own_blocks:
            rep[first:stop] = [witness] * (stop - first)

        def settled(state: int) -> int:  # a witness may lie in another block (a trie in a literal's states)
            while rep[state] != state:
                state = rep[state]
            return state

        blocks = [(first, stop, settled(witness)) for first, stop, witness in own_blocks]
        for first, stop, witness in blocks:
            rep[first:stop] = [witness] * (stop - first)
        for block in self.counted:  # entered at its start, which finishes when its exit does
            rep.append(settled(block.exit))
        entered = {block.entry: n + i for i, block in enumerate(self.counted)}
        preds: list[list[int]] = [[] for _ in range(n)]
        by_return: dict[int, list[tuple[int, int]]] = {}
        by_callee: dict[int, list[tuple[int, int]]] = {}
        succ: list[set[int]] = [set() for _ in self.fragments]  # the call graph, for the recursion marks
        edges, eps, calls, owner = self.edges, self.eps, self.calls, self.owner
        for a, b in self._analysed():
            for s, row, moves, called in zip(range(a, b), edges[a:b], eps[a:b], calls[a:b]):
                for _, _, t in row:
                    t = rep[t]
                    if t != s:  # a loop (whitespace, most often) makes nothing live
                        preds[t].append(s)
                for t in moves:
                    preds[rep[entered.get(t, t)] if entered else rep[t]].append(s)
                if called:
                    for g, r in called:
                        by_return.setdefault(rep[r], []).append((s, g))
                        by_callee.setdefault(g, []).append((s, rep[r]))
                    succ[owner[s]].update(g for g, _ in called)
        self._mark_recursive(succ)
        frags = self.fragments
        free_start = {f.start: g for g, f in enumerate(frags) if not f.costs_depth}
        costly = [g for g, f in enumerate(frags) if f.costs_depth]

        def propagate(live: bytearray, todo: list[int], below: bytearray | None) -> None:
            while todo:
                t = todo.pop()
                for s in preds[t]:
                    if not live[s]:
                        live[s] = 1
                        todo.append(s)
                for s, g in by_return.get(t, ()):
                    if not live[s]:
                        f = frags[g]
                        if (below is not None and below[f.start]) if f.costs_depth else live[f.start]:
                            live[s] = 1
                            todo.append(s)
                g = free_start.get(t)
                if g is not None:
                    for s, r in by_callee.get(g, ()):
                        if not live[s] and live[r]:
                            live[s] = 1
                            todo.append(s)

        base_starts = [f.start for f in frags[: len(base.fragments)]] if base is not None else []

        def from_base(live: bytearray, level: int, below: bytearray | None) -> list[int]:
            """The prelude's part of a level set as it is there; its fragments' starts that this
            level makes live, for their callers to be looked at."""
            if base is None:
                return []
            levels = base._live
            live[:skip] = levels[min(level, len(levels) - 1)]
            return [t for t in base_starts if live[t] and (below is None or not below[t])]

        live = bytearray(self.size)
        finals = list({f.final for f in frags if f.final >= skip})
        # a waiting fragment's start is live where it surely can finish (``defer``)
        finals += [frags[g].start for g, shallow in self.waiting.items() if shallow is True]
        deep = [frags[g].start for g, shallow in self.waiting.items() if shallow is False]
        for t in finals:
            live[t] = 1
        propagate(live, finals + from_base(live, 0, None), None)
        levels: list[bytearray] = [live]
        callable_: set[int] = set()  # depth-costing fragments that could start one level down
        while len(levels) <= self.max_depth:
            below = levels[-1]
            fresh = [g for g in costly if below[frags[g].start] and g not in callable_]
            if not fresh:
                self._stable = True
                break  # the next level would equal this one, and so would every level above
            callable_.update(fresh)
            live = bytearray(below)  # levels only grow: start from the one below
            todo = from_base(live, len(levels), below)
            for t in deep if len(levels) == 1 else ():
                live[t] = 1
                todo.append(t)
            for g in fresh:
                for s, r in by_callee.get(g, ()):
                    if not live[s] and live[r]:
                        live[s] = 1
                        todo.append(s)
            propagate(live, todo, below)
            levels.append(live)
        counted = [(block.first, block.first + block.size, settled(block.exit), block.live_bytes())
                   for block in self.counted]
        for live in levels:
            for first, stop, witness in blocks:
                if live[witness]:
                    live[first:stop] = b"\x01" * (stop - first)
            for first, stop, witness, states in counted:
                if live[witness]:
                    live[first:stop] = states
        while len(levels) <= self.max_depth:
            levels.append(levels[-1])
        return levels

    @property
    def _settled(self) -> int:
        """States numbered first whose analysis is taken from a settled prelude (``include``)."""
        return self.included if self._base is not None else 0

    def _analysed(self) -> list[tuple[int, int]]:
        """The runs of states outside every block (and past a settled prelude), in order."""
        runs, start = [], self._settled
        for first, stop, _ in sorted(self.blocks):
            if stop > start:
                if first > start:
                    runs.append((start, first))
                start = stop
        runs.append((start, len(self.owner)))
        return runs

    def live(self, depth: int) -> bytearray:
        assert self._live is not None, "Program.finish() was not called"
        return self._live[depth]

    def root_is_live(self) -> bool:
        frag = self.fragments[self.root]
        depth = self.max_depth - (1 if frag.costs_depth else 0)
        return depth >= 0 and bool(self.live(depth)[frag.start])


def _simple(edges, eps, calls, is_final) -> list[int]:
    """Per state, whether its closure is itself: byte edges only, not a fragment's final state."""
    return [1 if e and not p and not c and not f else 0 for e, p, c, f in zip(edges, eps, calls, is_final)]


class _Tail(list):
    """One table (edges, epsilon moves, calls or owners) of a segment while it is written, indexed
    by state number from ``first`` on, as the whole table is before ``finish``."""

    __slots__ = ("first",)

    def __init__(self, first: int):
        super().__init__()
        self.first = first

    def __getitem__(self, s: int):
        if s < self.first:
            raise IndexError(f"state {s} is not in the segment being written (from {self.first})")
        return list.__getitem__(self, s - self.first)

    def __len__(self) -> int:
        return self.first + list.__len__(self)
