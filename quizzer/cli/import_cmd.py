"""`quizzer import anki FILE`: bring reviews made in Anki back into quizzer's history."""

from __future__ import annotations

from pathlib import Path

import click

from quizzer.cli.common import console, err_console, state
from quizzer.cli.suggest import SuggestingGroup
from quizzer.review.model import plural


@click.group("import", cls=SuggestingGroup)
def import_group() -> None:
    """Bring reviews made elsewhere back into quizzer."""


@import_group.command("anki")
@click.argument("file", type=click.Path(path_type=Path))
@click.pass_context
def import_anki(ctx: click.Context, file: Path) -> None:
    """Merge the reviews of an Anki export (.apkg or .colpkg, with scheduling) by time;
    importing the same file again adds nothing."""
    from quizzer.db.history import import_records
    from quizzer.export.anki_import import read_anki_reviews

    app = state(ctx)
    found = read_anki_reviews(file.expanduser(), app.bank)  # all read before any write
    if found.foreign_notes or found.unknown_guids:
        err_console.print(
            f"left alone: {plural(found.foreign_notes, 'note')} not made by quizzer, "
            f"{plural(found.unknown_guids, 'quizzer note')} for questions this bank no longer has",
            markup=False,
        )
    report = import_records(app.sessions.factory(), found.records, app.review_service().scheduler)
    console.print(
        f"{plural(found.quizzer_notes, 'quizzer note')}; reviews: {report.reviews_added} added, "
        f"{report.reviews_known} already there; "
        f"{plural(report.cards_recomputed, 'card')} recomputed",
        markup=False,
    )
