"""Behaviour tests for the hand-coding answers of the algo topic, each against a brute force
on random inputs and on the edges: empty, one element, duplicates, negatives."""

from __future__ import annotations

import itertools
import random
import statistics
from dataclasses import dataclass
from typing import Any

import pytest

from tests.bank_code.blocks import load_block
from tests.bank_code.inputs import RNG_SEED, random_lists


@dataclass
class ListNode:
    """The singly linked node the answers assume."""

    val: Any = 0
    next: ListNode | None = None


@dataclass
class TreeNode:
    """The binary-tree node the answers assume."""

    val: int
    left: TreeNode | None = None
    right: TreeNode | None = None


def to_list(values: list[Any]) -> ListNode | None:
    """A linked list holding `values`."""
    head = None
    for value in reversed(values):
        head = ListNode(value, head)
    return head


def from_list(head: ListNode | None) -> list[Any]:
    """The values of a linked list, with a guard against accidental cycles."""
    out = []
    while head is not None:
        out.append(head.val)
        head = head.next
        assert len(out) < 10_000, "cycle"
    return out


def test_lru_cache_matches_a_reference_model() -> None:
    ns = load_block("algo-code-lru-cache", 0)
    rng = random.Random(RNG_SEED)
    for cap in (0, 1, 2, 3):
        cache, model = ns["LRUCache"](cap), {}  # dicts keep insertion order: LRU first
        for _ in range(500):
            k = rng.randint(0, 4)
            if rng.random() < 0.5:
                expected = model.pop(k, -1)
                if expected != -1:
                    model[k] = expected
                assert cache.get(k) == expected
            else:
                v = rng.randint(0, 99)
                model.pop(k, None)
                if cap:
                    model[k] = v
                    if len(model) > cap:
                        del model[next(iter(model))]
                cache.put(k, v)


def test_lfu_cache_matches_a_reference_model() -> None:
    ns = load_block("algo-code-lfu-cache", 0)
    rng = random.Random(RNG_SEED)
    for cap in (0, 1, 2, 3):
        cache, val, freq, last, clock = ns["LFUCache"](cap), {}, {}, {}, 0
        for _ in range(500):
            k, clock = rng.randint(0, 4), clock + 1
            if rng.random() < 0.5:
                got = cache.get(k)
                assert got == val.get(k, -1)
                if k in val:
                    freq[k] += 1
                    last[k] = clock
            elif cap:
                if k not in val and len(val) == cap:
                    old = min(val, key=lambda key: (freq[key], last[key]))
                    del val[old], freq[old], last[old]
                freq[k] = freq.get(k, 0) + 1
                val[k], last[k] = rng.randint(0, 99), clock
                cache.put(k, val[k])
            else:
                cache.put(k, 1)
                assert cache.get(k) == -1


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_sliding_window_max_and_median(k: int) -> None:
    max_window = load_block("algo-code-sliding-window-max-median", 0)["max_window"]
    median_window = load_block("algo-code-sliding-window-max-median", 1)["median_window"]
    for a in random_lists(random.Random(k)):
        windows = [a[i : i + k] for i in range(len(a) - k + 1)]
        assert max_window(a, k) == [max(w) for w in windows]
        assert median_window(a, k) == [statistics.median(w) for w in windows]


def test_linked_list_routines() -> None:
    ns = load_block("algo-code-linked-lists", 0, ListNode=ListNode)
    rng = random.Random(RNG_SEED)
    for values in random_lists(rng):
        assert from_list(ns["reverse"](to_list(values))) == values[::-1]
        for k in (1, 2, 3):
            whole = len(values) - len(values) % k
            expected = [x for i in range(0, whole, k) for x in values[i : i + k][::-1]]
            got = from_list(ns["reverse_k_group"](to_list(values), k))
            assert got == expected + values[whole:]
    for lists in ([], [[]], [[1, 4], [], [1, 3, 3], [-2]]):
        merged = ns["merge_k"]([to_list(sorted(v)) for v in lists])
        assert from_list(merged) == sorted(x for v in lists for x in v)
    for n, join in ((0, None), (1, None), (1, 0), (5, 2), (5, None), (4, 3)):
        nodes = [ListNode(i) for i in range(n)]
        for a, b in itertools.pairwise(nodes):
            a.next = b
        if join is not None:
            nodes[-1].next = nodes[join]
        start = ns["cycle_start"](nodes[0] if nodes else None)
        assert start is (nodes[join] if join is not None else None)


def _random_tree(rng: random.Random, depth: int) -> TreeNode | None:
    if depth == 0 or rng.random() < 0.25:
        return None
    node = TreeNode(rng.randint(-9, 9))
    node.left, node.right = _random_tree(rng, depth - 1), _random_tree(rng, depth - 1)
    return node


def _paths(node: TreeNode | None) -> list[int]:
    """Sums of every downward path starting at `node` (brute force)."""
    if node is None:
        return []
    below = _paths(node.left) + _paths(node.right)
    return [node.val] + [node.val + s for s in below]


def _best_path(node: TreeNode | None) -> float:
    if node is None:
        return float("-inf")
    left, right = [0, *_paths(node.left)], [0, *_paths(node.right)]
    here = node.val + max(left) + max(right)
    return max(here, _best_path(node.left), _best_path(node.right))


def test_tree_traversals_and_max_path_sum() -> None:
    ns = load_block("algo-code-binary-tree-traversals", 0)
    rng = random.Random(RNG_SEED)
    assert ns["level_order"](None) == [] and ns["inorder"](None) == []
    for _ in range(200):
        root = _random_tree(rng, 5)

        def inorder(n: TreeNode | None) -> list[int]:
            return [*inorder(n.left), n.val, *inorder(n.right)] if n else []

        def levels(n: TreeNode | None, depth: int, out: list[list[int]]) -> list[list[int]]:
            if n:
                if len(out) == depth:
                    out.append([])
                out[depth].append(n.val)
                levels(n.left, depth + 1, out)
                levels(n.right, depth + 1, out)
            return out

        assert ns["inorder"](root) == inorder(root)
        assert ns["level_order"](root) == levels(root, 0, [])
        if root:
            assert ns["max_path_sum"](root) == _best_path(root)


def test_median_of_two_sorted_arrays() -> None:
    median_two = load_block("algo-code-binary-search-arrays", 0)["median_two"]
    rng = random.Random(RNG_SEED)
    for _ in range(400):
        a = sorted(rng.randint(-9, 9) for _ in range(rng.randint(0, 6)))
        b = sorted(rng.randint(-9, 9) for _ in range(rng.randint(0 if a else 1, 6)))
        assert median_two(a, b) == statistics.median(a + b)


def test_kth_smallest_in_a_sorted_matrix() -> None:
    kth = load_block("algo-code-binary-search-arrays", 1)["kth_smallest"]
    rng = random.Random(RNG_SEED)
    for _ in range(200):
        rows, cols = rng.randint(1, 5), rng.randint(1, 5)
        m = [[0] * cols for _ in range(rows)]
        for r in range(rows):
            for c in range(cols):
                up = m[r - 1][c] if r else -20
                left = m[r][c - 1] if c else -20
                m[r][c] = max(up, left) + rng.randint(0, 3)
        flat = sorted(x for row in m for x in row)
        for k in range(1, len(flat) + 1):
            assert kth(m, k) == flat[k - 1]


def test_top_k_routines() -> None:
    top_k = load_block("algo-code-top-k-heaps", 0)["top_k_largest"]
    kth_largest = load_block("algo-code-top-k-heaps", 1)["kth_largest"]
    top_k_frequent = load_block("algo-code-top-k-heaps", 2)["top_k_frequent"]
    for a in random_lists(random.Random(RNG_SEED)):
        for k in range(0, len(a) + 2):
            assert sorted(top_k(a, k)) == sorted(a)[::-1][:k][::-1]
            if 1 <= k <= len(a):
                assert kth_largest(a, k) == sorted(a)[-k]
            got = top_k_frequent(a, k)
            counts = {x: a.count(x) for x in a}
            assert len(got) == min(k, len(counts)) and len(set(got)) == len(got)
            ranked = sorted(counts.values(), reverse=True)
            assert sorted((counts[x] for x in got), reverse=True) == ranked[: len(got)]


def test_sorting() -> None:
    quicksort = load_block("algo-code-sorting", 0)["quicksort"]
    merge_sort_list = load_block("algo-code-sorting", 1, ListNode=ListNode)["merge_sort_list"]
    for a in [*random_lists(random.Random(RNG_SEED), size=40), [3] * 50, list(range(60, 0, -1))]:
        b = a[:]
        quicksort(b)
        assert b == sorted(a)
        pairs = [(x, i) for i, x in enumerate(a)]  # stability: equal keys keep their order
        head = to_list([_Keyed(x, i) for x, i in pairs])
        got = [(v.key, v.tag) for v in from_list(merge_sort_list(head))]
        assert got == sorted(pairs)


@dataclass(frozen=True)
class _Keyed:
    """Compares by `key` only, so a stable sort keeps `tag` order among equal keys."""

    key: int
    tag: int

    def __le__(self, other: _Keyed) -> bool:
        return self.key <= other.key
