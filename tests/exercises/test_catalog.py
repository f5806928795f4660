"""The catalog and every ready exercise's metadata and files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from quizzer.exercises.catalog import (
    CatalogError,
    ExerciseNotReadyError,
    UnknownExerciseError,
    exercises_dir,
    load_catalog,
)

REPO = Path(__file__).resolve().parents[2]
CATALOG = load_catalog(REPO / "exercises")
READY = [e.name for e in CATALOG if e.status == "ready"]


def test_exercises_dir_finds_the_checkout(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert (exercises_dir() / "catalog.yaml").is_file()
    monkeypatch.setenv("QUIZZER_EXERCISES_DIR", str(tmp_path))
    assert exercises_dir() == tmp_path


def test_catalog_order_and_status() -> None:
    assert CATALOG.names[:4] == ["ring-allreduce", "kv-cache", "gptq", "cuda-reduce"]
    assert [n for n in CATALOG.names if CATALOG.entry(n).status == "planned"] == []
    with pytest.raises(UnknownExerciseError, match=r"unknown exercise '\.\./x'") as info:
        CATALOG.get("../x")
    ready = ", ".join(CATALOG.names)
    assert f"(ready: {ready}); see quizzer exercise" in str(info.value)


def test_a_planned_entry_is_named_but_not_available(tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text(
        "- name: ring-allreduce\n  status: ready\n- name: later\n  status: planned\n"
    )
    catalog = load_catalog(tmp_path)
    with pytest.raises(ExerciseNotReadyError, match="planned but not available"):
        catalog.get("later")
    with pytest.raises(UnknownExerciseError) as info:
        catalog.get("nope")
    assert "(ready: ring-allreduce)" in str(info.value)


@pytest.mark.parametrize("name", READY)
def test_ready_exercise_is_complete(name: str) -> None:
    ex = CATALOG.get(name)
    topics = {t["id"] for t in yaml.safe_load((REPO / "bank/topics.yaml").read_text())}
    themes = {t["id"] for t in yaml.safe_load((REPO / "bank/themes.yaml").read_text())}
    assert ex.meta.topic in topics
    assert set(ex.meta.themes) <= themes, set(ex.meta.themes) - themes
    assert ex.readme.is_file() and ex.meta.hints
    assert list(ex.grader_dir.glob("test_*.py")), "a grader needs test_*.py files"
    for track in ex.meta.tracks:
        assert ex.starter_file(track.name).is_file()
        assert ex.solution_file(track.name).is_file()
    for mutant in ex.meta.mutants:
        first = ex.mutant_file(mutant).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(("# mutant:", "// mutant:")), f"{mutant.file}: {first!r}"


def test_bad_yaml_is_located(tmp_path: Path) -> None:
    (tmp_path / "catalog.yaml").write_text("- name: a\n  status: [oops\n")
    with pytest.raises(CatalogError, match=r"catalog.yaml:\d+: invalid YAML"):
        load_catalog(tmp_path)
    (tmp_path / "catalog.yaml").write_text("- name: a\n  status: ready\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "exercise.yaml").write_text("title: x\n")
    with pytest.raises(CatalogError, match=r"exercise\.yaml: topic: Field required"):
        load_catalog(tmp_path).get("a")
    (tmp_path / "catalog.yaml").write_text("- name: ../a\n  status: ready\n")
    with pytest.raises(CatalogError, match="lowercase slugs"):
        load_catalog(tmp_path)
