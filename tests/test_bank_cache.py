"""The bank cache is reused while nothing changed and rebuilt after any edit."""

from __future__ import annotations

import os
import shutil

from quizzer.bank.cache import load_bank_cached

from .conftest import FIXTURES


def test_cache_reused_then_invalidated_by_an_edit(tmp_path):
    extra = tmp_path / "extra"
    shutil.copytree(FIXTURES / "small", extra)
    first = load_bank_cached([extra])
    assert "t-lru" in first.questions
    cached = list((tmp_path / "home" / "cache").glob("bank-*.pickle"))
    assert len(cached) == 1
    again = load_bank_cached([extra])
    assert again.questions["t-lru"].question == first.questions["t-lru"].question
    path = extra / "questions.yaml"
    path.write_text(path.read_text().replace("Implement an LRU cache", "Build an LRU cache"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    edited = load_bank_cached([extra])
    assert edited.questions["t-lru"].question.startswith("Build an LRU cache")
    assert len(list((tmp_path / "home" / "cache").glob("bank-*.pickle"))) == 1


def test_damaged_cache_is_rebuilt(tmp_path):
    load_bank_cached([FIXTURES / "small"])
    for pickle_file in (tmp_path / "home" / "cache").glob("bank-*.pickle"):
        pickle_file.write_bytes(b"garbage")
    assert "t-kv" in load_bank_cached([FIXTURES / "small"]).questions
