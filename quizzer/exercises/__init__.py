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

__all__ = [
    "Catalog",
    "CatalogError",
    "Exercise",
    "ExerciseError",
    "ExerciseNotReadyError",
    "GradeResult",
    "Metric",
    "TestResult",
    "UnknownExerciseError",
    "exercises_dir",
    "get_exercise",
    "grade",
    "load_catalog",
]
