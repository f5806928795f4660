"""Graded coding exercises: catalog, workspace, out-of-process runner and pytest plugin.

Free of CLI, database, Textual and torch imports; the grader subprocess imports torch.
"""

from quizzer.exercises.catalog import (
    Catalog,
    CatalogError,
    Exercise,
    ExerciseError,
    ExerciseNotReadyError,
    UnknownExerciseError,
    exercises_dir,
    get_exercise,
    load_catalog,
)
from quizzer.exercises.runner import GradeResult, Metric, TestResult, grade
from quizzer.exercises.workspace import (
    ResetResult,
    ScaffoldResult,
    Workspace,
    WorkspaceError,
    is_pristine,
    open_workspace,
    reset,
    scaffold,
)

__all__ = [
    "Catalog",
    "CatalogError",
    "Exercise",
    "ExerciseError",
    "ExerciseNotReadyError",
    "GradeResult",
    "Metric",
    "ResetResult",
    "ScaffoldResult",
    "TestResult",
    "UnknownExerciseError",
    "Workspace",
    "WorkspaceError",
    "exercises_dir",
    "get_exercise",
    "grade",
    "is_pristine",
    "load_catalog",
    "open_workspace",
    "reset",
    "scaffold",
]
