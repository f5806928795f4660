"""Which files make up a bank (no YAML or schema imports: the cache needs this cheaply)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

REFERENCE_FILES = ("companies.yaml", "topics.yaml", "themes.yaml", "interviews.yaml")


def question_files(paths: Iterable[Path]) -> list[Path]:
    """Question files named directly, or every *.yaml below a folder (not reference data)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))
            out.extend(p for p in found if p.name not in REFERENCE_FILES)
        else:
            out.append(path)
    return out
