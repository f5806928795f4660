"""Every graded exercise, ready ones first; Enter shows one's instructions."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class ExerciseListScreen(ModalScreen[None]):
    """The exercise catalog as a table."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="exercise-list-box", classes="dialog"):
            yield Static("Exercises   (enter: instructions, escape: close)", classes="dialog-title")
            yield DataTable(id="exercise-list", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        from quizzer.exercises.catalog import CatalogError, load_catalog

        table = self.query_one(DataTable)
        table.add_columns("exercise", "status", "topic", "minutes", "title")
        try:
            catalog = load_catalog()
            rows = []
            for entry in catalog:
                if entry.status == "ready":
                    meta = catalog.get(entry.name).meta
                    rows.append((entry.name, "ready", meta.topic, str(meta.minutes), meta.title))
                else:
                    rows.append((entry.name, "planned", "", "", ""))
        except CatalogError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        rows.sort(key=lambda r: r[1] != "ready")
        for row in rows:
            table.add_row(*(Text(cell) for cell in row), key=row[0])

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        from quizzer.tui.screens.exercise_info import ExerciseScreen

        if event.row_key.value is not None:
            self.app.push_screen(ExerciseScreen(event.row_key.value))
