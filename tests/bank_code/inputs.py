"""Random inputs shared by the behaviour tests of the algo answers."""

from __future__ import annotations

import random

RNG_SEED = 1234


def random_lists(rng: random.Random, count: int = 200, size: int = 12) -> list[list[int]]:
    """Short integer lists with duplicates and negatives, the empty list first."""
    return [[]] + [[rng.randint(-5, 5) for _ in range(rng.randint(1, size))] for _ in range(count)]
