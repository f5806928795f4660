"""A pickled copy of the validated bank, reused while no bank file has changed.

Parsing and validating hundreds of questions costs most of a second; starting the study
app should not pay it every time. The key covers every file's path, size and mtime and
the quizzer version, so any edit, added file or upgrade rebuilds the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Sequence
from pathlib import Path

from quizzer import __version__
from quizzer.bank.files import REFERENCE_FILES, question_files
from quizzer.bank.model import Bank
from quizzer.paths import bank_dir, shipped_exercises_root, user_cache_dir


def _fingerprint(extra: Sequence[Path]) -> str:
    root = bank_dir()
    files = [root / name for name in REFERENCE_FILES]
    files.append(shipped_exercises_root() / "catalog.yaml")
    here = Path(__file__).parent
    files += [here / "model.py", here / "loader.py"]  # a changed shape rebuilds it too
    files += question_files([root / "questions", *extra])
    digest = hashlib.sha256(__version__.encode())
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            return ""  # something is missing: let the loader report it
        digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def load_bank_cached(extra: Sequence[Path] = ()) -> Bank:
    key = _fingerprint(extra)
    path = user_cache_dir() / f"bank-{key[:32]}.pickle"
    if key and path.is_file():
        try:
            with path.open("rb") as handle:
                bank = pickle.load(handle)
            if isinstance(bank, Bank):
                return bank
        except Exception:  # a damaged cache is rebuilt, never fatal
            pass
    from quizzer.bank.loader import load_bank

    bank = load_bank(extra=extra)
    if key:
        _store(path, bank)
    return bank


def _store(path: Path, bank: Bank) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob("bank-*.pickle"):
            old.unlink(missing_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump(bank, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except OSError:
        pass  # a read-only cache dir only costs speed
