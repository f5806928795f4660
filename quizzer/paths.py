"""Where quizzer finds its data and keeps the user's files.

Nothing here touches the disk at import time; every location is a function.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "quizzer"
_PACKAGE_DIR = Path(__file__).resolve().parent


def _shipped(name: str) -> Path:
    """A data folder: inside the installed wheel, or at the root of a source checkout."""
    installed = _PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / name


def bank_dir() -> Path:
    return _shipped("bank")


def shipped_exercises_root() -> Path:
    """The exercises that ship with quizzer: the names the built-in bank may link to."""
    return _shipped("exercises")


def exercises_root() -> Path:
    """The folder holding exercises/catalog.yaml; ``QUIZZER_EXERCISES_DIR`` overrides it."""
    override = os.environ.get("QUIZZER_EXERCISES_DIR")
    return Path(override) if override else _shipped("exercises")


def user_data_dir() -> Path:
    from platformdirs import user_data_path

    override = os.environ.get("QUIZZER_HOME")
    return Path(override) if override else user_data_path(APP_NAME, appauthor=False)


def default_db_url() -> str:
    return f"sqlite:///{user_data_dir() / 'quizzer.db'}"


def user_cache_dir() -> Path:
    from platformdirs import user_cache_path

    override = os.environ.get("QUIZZER_HOME")
    return Path(override) / "cache" if override else user_cache_path(APP_NAME, appauthor=False)
