"""`quizzer export anki` and `quizzer export csv`."""

from __future__ import annotations

from pathlib import Path

import click

from quizzer.cli.common import console, filter_options, make_filters, state
from quizzer.cli.suggest import SuggestingGroup
from quizzer.errors import QuizzerError
from quizzer.review.model import plural


def _output(path: Path) -> Path:
    path = path.expanduser()
    if path.is_dir():
        raise QuizzerError(f"output path is a folder: {path}")
    if not path.parent.is_dir():
        raise QuizzerError(f"output folder does not exist: {path.parent}")
    return path


@click.group("export", cls=SuggestingGroup)
def export_group() -> None:
    """Export the bank to Anki."""


@export_group.command("anki")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("quizzer.apkg"))
@filter_options
@click.option("--due-only", is_flag=True, help="Only questions that are due now.")
@click.option(
    "--with-schedule",
    is_flag=True,
    help="Carry each card's schedule, FSRS memory state and review log (needs quizzer[anki]).",
)
@click.pass_context
def export_anki(
    ctx: click.Context, output: Path, due_only: bool, with_schedule: bool, **filter_args: object
) -> None:
    """Write an Anki deck (.apkg): one sub-deck per topic, updated in place on re-import."""
    from quizzer.export.anki import export_apkg

    app = state(ctx)
    bank = app.bank
    filters = make_filters(bank, **filter_args)  # type: ignore[arg-type]
    if due_only:
        questions = [bank.questions[i] for i in app.review_service(quick=True).queue(filters)]
    else:
        questions = bank.select(filters)
    if not questions:
        raise QuizzerError("no question matches these filters; nothing to export")
    path = _output(output)
    if with_schedule:
        _export_scheduled(ctx, questions, path)
        return
    summary = export_apkg(bank, questions, path)
    decks = plural(len(summary.decks) - 1, "topic deck")
    # soft_wrap: a path cut over two lines cannot be copied
    console.print(
        f"wrote {plural(summary.notes, 'note')} in {decks} to {summary.path}", soft_wrap=True
    )


def _export_scheduled(ctx: click.Context, questions: list, path: Path) -> None:
    from datetime import UTC, datetime

    from quizzer.export.anki_schedule import export_with_schedule, read_schedule, require_anki

    require_anki()
    app = state(ctx)
    service = app.review_service()
    now = datetime.now(UTC)
    cards, reviews = read_schedule(app.sessions.factory(), app.bank, now)
    chosen = {q.id for q in questions}
    scheduled = export_with_schedule(
        app.bank,
        questions,
        [c for c in cards if c.question_id in chosen],
        [r for r in reviews if r.question_id in chosen],
        path,
        now=now,
        day=service.day,
        retention=service.scheduler.desired_retention,
    )
    console.print(
        f"wrote {plural(len(questions), 'note')} to {path}, {scheduled} with their schedule "
        "and review log"
        " (open it in Anki with FSRS on)",
        markup=False,
        soft_wrap=True,
    )


@export_group.command("csv")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("quizzer.csv"))
@filter_options
@click.pass_context
def export_csv_cmd(ctx: click.Context, output: Path, **filter_args: object) -> None:
    """Write a tab-separated file that Anki imports directly (File > Import)."""
    from quizzer.export.csv_export import export_csv

    bank = state(ctx).bank
    questions = bank.select(make_filters(bank, **filter_args))  # type: ignore[arg-type]
    if not questions:
        raise QuizzerError("no question matches these filters; nothing to export")
    summary = export_csv(bank, questions, _output(output))
    console.print(f"wrote {plural(summary.notes, 'note')} to {summary.path}", soft_wrap=True)
