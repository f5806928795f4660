"""Behaviour tests for the algo topic's classics (dynamic programming, graph search,
strings, bit tricks), each against a brute force on small random inputs and the edges."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from tests.bank_code.blocks import load_block
from tests.bank_code.inputs import RNG_SEED, random_lists


def _edit(a: str, b: str) -> int:
    if not a or not b:
        return len(a) + len(b)
    if a[0] == b[0]:
        return _edit(a[1:], b[1:])
    return 1 + min(_edit(a[1:], b), _edit(a, b[1:]), _edit(a[1:], b[1:]))


def test_dynamic_programming_classics() -> None:
    ns = load_block("algo-code-dynamic-programming", 0)
    rng = random.Random(RNG_SEED)
    for _ in range(150):
        a = "".join(rng.choice("ab") for _ in range(rng.randint(0, 6)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 6)))
        assert ns["edit_distance"](a, b) == _edit(a, b)
        subs = {"".join(c) for n in range(len(a) + 1) for c in itertools.combinations(a, n)}
        assert ns["lcs"](a, b) == max(len(s) for s in subs if _is_subsequence(s, b))
        w = [rng.randint(1, 6) for _ in range(rng.randint(0, 6))]
        v = [rng.randint(0, 9) for _ in w]
        cap = rng.randint(0, 12)
        best = max(
            sum(v[i] for i in pick)
            for n in range(len(w) + 1)
            for pick in itertools.combinations(range(len(w)), n)
            if sum(w[i] for i in pick) <= cap
        )
        assert ns["knapsack01"](w, v, cap) == best
    for a in random_lists(rng)[1:]:
        sums = [sum(a[i:j]) for i in range(len(a)) for j in range(i + 1, len(a) + 1)]
        assert ns["max_subarray"](a) == max(sums)
        h = [abs(x) for x in a]
        water = sum(min(max(h[: i + 1]), max(h[i:])) - h[i] for i in range(len(h)))
        assert ns["trap"](h) == water
    assert ns["trap"]([]) == 0


def _is_subsequence(s: str, t: str) -> bool:
    it = iter(t)
    return all(ch in it for ch in s)


def test_graph_searches() -> None:
    num_islands = load_block("algo-code-graph-search", 0)["num_islands"]
    ladder = load_block("algo-code-graph-search", 1)["ladder_length"]
    assert num_islands([]) == 0 and num_islands([[]]) == 0
    rng = random.Random(RNG_SEED)
    for _ in range(100):
        grid = [[rng.choice("01") for _ in range(rng.randint(1, 6))] for _ in range(3)]
        width = min(len(r) for r in grid)
        grid = [r[:width] for r in grid]
        assert num_islands(grid) == _islands(grid)
    assert ladder("hit", "cog", ["hot", "dot", "dog", "lot", "log", "cog"]) == 5
    assert ladder("hit", "cog", ["hot", "dot", "dog", "lot", "log"]) == 0
    assert ladder("a", "c", ["c"]) == 2
    assert ladder("ab", "ab", ["ab"]) == 1


def _islands(grid: list[list[str]]) -> int:
    cells = {(r, c) for r, row in enumerate(grid) for c, x in enumerate(row) if x == "1"}
    count = 0
    while cells:
        count += 1
        stack = [cells.pop()]
        while stack:
            r, c = stack.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in cells:
                    cells.remove(nb)
                    stack.append(nb)
    return count


def test_string_and_hashing_classics() -> None:
    ns = load_block("algo-code-strings-hashing", 0)
    rng = random.Random(RNG_SEED)
    for a in random_lists(rng):
        triples = {tuple(sorted(t)) for t in itertools.combinations(a, 3) if sum(t) == 0}
        got = ns["three_sum"](a[:])
        assert len(got) == len(triples) and {tuple(t) for t in got} == triples
        runs = [n for n in range(len(a) + 1) if any(set(range(x, x + n)) <= set(a) for x in a)]
        assert ns["longest_consecutive"](a) == max(runs, default=0)
        s = "".join("abc"[abs(x) % 3] for x in a)
        subs = [s[i:j] for i in range(len(s) + 1) for j in range(i, len(s) + 1)]
        pals = [sub for sub in subs if sub == sub[::-1]]
        assert len(ns["longest_palindrome"](s)) == max(map(len, pals))
        assert ns["longest_palindrome"](s) in pals
        for k in (0, 1, 2):
            best = max(len(sub) for sub in subs if len(set(sub)) <= k)
            assert ns["at_most_k_distinct"](s, k) == best


def test_misc_classics() -> None:
    ns = load_block("algo-code-misc-classics", 0)
    for a in ([], [1], [1, 2, 3], [3, 2, 1], [1, 1, 5], [2, 3, 3, 1]):
        perms = sorted(set(itertools.permutations(a)))
        b = a[:]
        ns["next_permutation"](b)
        nxt = perms[(perms.index(tuple(a)) + 1) % len(perms)]
        assert tuple(b) == nxt
    stack, shadow = ns["MinStack"](), []
    for x in (5, 3, 7, 3, -1, 8):
        stack.push(x)
        shadow.append(x)
        assert stack.get_min() == min(shadow) and stack.top() == x
    for _ in range(5):
        stack.pop()
        shadow.pop()
        assert stack.get_min() == min(shadow)
    fast_pow = ns["fast_pow"]
    for x, n in itertools.product((-3, -1, 2, 5), range(-4, 9)):
        assert fast_pow(x, n) == pytest.approx(x**n)
        for mod in (1, 7, 10**9 + 7):
            expected = pow(x, n, mod)  # Python's own: an int, the inverse for n < 0
            got = fast_pow(x, n, mod)
            assert got == expected and isinstance(got, int)
    with pytest.raises(ValueError):
        fast_pow(6, -1, 9)  # no inverse: gcd(6, 9) = 3
    with pytest.raises(ValueError):
        fast_pow(2, 3, 0)
    assert fast_pow(2, 10**18, 10**9 + 7) == pow(2, 10**18, 10**9 + 7)
    for n in (0, 1, 2**31 - 1, 2**64 - 1, 0xDEADBEEF):
        assert ns["popcount"](n) == bin(n).count("1")
    with pytest.raises(ValueError):
        ns["popcount"](-1)
    for n in (0, 4, 5, 25, 100, 1000):
        f = str(math.factorial(n))
        assert ns["trailing_zeros_fact"](n) == len(f) - len(f.rstrip("0"))
    for n in (0, 1, 2, 3, 4):
        m = [[r * n + c for c in range(n)] for r in range(n)]
        rotated = [list(row) for row in zip(*m[::-1], strict=True)]
        ns["rotate"](m)
        assert m == rotated
    assert ns["clock_angle"](3, 0) == 90 and ns["clock_angle"](12, 30) == 165
    assert ns["clock_angle"](9, 0) == 90 and ns["clock_angle"](3, 15) == 7.5
