"""Workspace: scaffold, never overwrite the user's edits, reset with a backup, refuse bad names."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizzer.exercises import workspace
from quizzer.exercises.catalog import Catalog, ExerciseError, UnknownExerciseError
from quizzer.exercises.workspace import MANIFEST, is_pristine, reset, scaffold


def test_scaffold_creates_starter_readme_and_manifest(toy_catalog: Catalog, tmp_path: Path) -> None:
    result = scaffold("toy", root=tmp_path / "ws", catalog=toy_catalog)
    folder = tmp_path / "ws" / "toy"
    assert result.file == folder / "toy.py"
    assert result.is_new
    assert sorted(p.name for p in result.created) == ["README.md", "toy.py"]
    assert (folder / "toy.py").read_text() == (toy_catalog.root / "toy/starter/toy.py").read_text()
    assert "toy.py" in (folder / MANIFEST).read_text()
    assert is_pristine("toy", root=tmp_path / "ws", catalog=toy_catalog)


def test_default_root_is_overridable(toy_catalog: Catalog, tmp_path: Path) -> None:
    assert workspace.default_root() == tmp_path / "workspace"  # set by conftest
    result = scaffold("toy", catalog=toy_catalog)
    assert result.file == tmp_path / "workspace" / "toy" / "toy.py"


def test_rescaffold_keeps_the_users_edit(toy_catalog: Catalog, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    first = scaffold("toy", root=root, catalog=toy_catalog)
    first.file.write_text("def add(a, b):\n    return a + b  # mine\n")
    again = scaffold("toy", root=root, catalog=toy_catalog)
    assert again.kept == [first.file]
    assert not again.is_new
    assert "# mine" in first.file.read_text()
    assert not is_pristine("toy", root=root, catalog=toy_catalog)


def test_pristine_copy_follows_a_new_starter(toy_catalog: Catalog, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    scaffold("toy", root=root, catalog=toy_catalog)
    (toy_catalog.root / "toy/starter/toy.py").write_text("# starter v2\n")
    again = scaffold("toy", root=root, catalog=toy_catalog)
    assert again.updated == [root / "toy" / "toy.py"]
    assert (root / "toy" / "toy.py").read_text() == "# starter v2\n"


def test_unrecorded_existing_file_is_treated_as_the_users(
    toy_catalog: Catalog, tmp_path: Path
) -> None:
    folder = tmp_path / "ws" / "toy"
    folder.mkdir(parents=True)
    (folder / "toy.py").write_text("# written before quizzer\n")
    result = scaffold("toy", root=tmp_path / "ws", catalog=toy_catalog)
    assert result.kept == [folder / "toy.py"]
    assert (folder / "toy.py").read_text() == "# written before quizzer\n"


def test_reset_backs_up_the_edit(toy_catalog: Catalog, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    target = scaffold("toy", root=root, catalog=toy_catalog).file
    target.write_text("# my work\n")
    first = reset("toy", root=root, catalog=toy_catalog)
    assert first.backup is not None and first.backup.read_text() == "# my work\n"
    assert first.backup.parent.parent == root / "toy" / workspace.BACKUPS
    assert is_pristine("toy", root=root, catalog=toy_catalog)
    target.write_text("# more work\n")
    second = reset("toy", root=root, catalog=toy_catalog)  # same second: a distinct backup
    assert second.backup is not None and second.backup != first.backup
    assert first.backup.read_text() == "# my work\n"
    assert reset("toy", root=root, catalog=toy_catalog).backup is None  # nothing to save


def test_second_track_has_its_own_file(toy_catalog: Catalog, tmp_path: Path) -> None:
    result = scaffold("toy", root=tmp_path / "ws", track="other", catalog=toy_catalog)
    assert result.file.name == "toy_other.py"
    with pytest.raises(ExerciseError, match="no track 'gpu'"):
        scaffold("toy", root=tmp_path / "ws", track="gpu", catalog=toy_catalog)


@pytest.mark.parametrize(
    "name", ["../x", "../../etc", "/etc/passwd", "toy/../toy", "", "Toy", "nope"]
)
def test_bad_names_are_refused(toy_catalog: Catalog, tmp_path: Path, name: str) -> None:
    with pytest.raises(UnknownExerciseError) as info:
        scaffold(name, root=tmp_path / "ws", catalog=toy_catalog)
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and "unknown exercise" in str(info.value)
    assert not (tmp_path / "ws").exists()
    with pytest.raises(UnknownExerciseError):
        reset(name, root=tmp_path / "ws", catalog=toy_catalog)


def test_planned_exercise_is_not_scaffolded(toy_catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(ExerciseError, match="planned"):
        scaffold("later", root=tmp_path / "ws", catalog=toy_catalog)


def test_file_in_place_of_the_folder(toy_catalog: Catalog, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "toy").write_text("not a folder")
    with pytest.raises(ExerciseError, match="not a folder"):
        scaffold("toy", root=tmp_path / "ws", catalog=toy_catalog)


def test_reset_refuses_a_linked_backup_folder(toy_catalog: Catalog, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    target = scaffold("toy", root=root, catalog=toy_catalog).file
    target.write_text("# my work\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "toy" / workspace.BACKUPS).symlink_to(outside)
    with pytest.raises(workspace.WorkspaceError, match="symbolic link"):
        reset("toy", root=root, catalog=toy_catalog)
    assert list(outside.iterdir()) == [] and target.read_text() == "# my work\n"


def test_a_linked_manifest_is_refused(toy_catalog: Catalog, tmp_path: Path) -> None:
    folder = tmp_path / "ws" / "toy"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (folder / MANIFEST).symlink_to(outside)
    with pytest.raises(workspace.WorkspaceError, match="symbolic link"):
        scaffold("toy", root=tmp_path / "ws", catalog=toy_catalog)
    assert outside.read_text() == "keep\n" and not (folder / "toy.py").exists()
