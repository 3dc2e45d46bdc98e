"""Deep recursion without Python's stack: generators that ``yield`` a request for a child's result.

``run(generator, visit)`` drives them on an explicit stack: each value a generator yields is passed
to ``visit`` to make the child's generator, and the child's return value is sent back. Schemas and
instances nested thousands of levels deep walk this way without ``RecursionError``.
"""

from __future__ import annotations


def run(generator, visit):
    stack, value = [generator], None
    while True:
        try:
            request = stack[-1].send(value)
        except StopIteration as stop:
            stack.pop()
            if not stack:
                return stop.value
            value = stop.value
            continue
        stack.append(visit(request))
        value = None
