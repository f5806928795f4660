"""`quizzer history export|import` and `quizzer db copy`: a history the user can move."""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from quizzer.cli.common import console, state
from quizzer.cli.suggest import SuggestingGroup
from quizzer.errors import QuizzerError
from quizzer.review.model import plural

if TYPE_CHECKING:
    from collections.abc import Iterator

    from quizzer.cli.context import AppContext
    from quizzer.db.history import ImportReport


@click.group("history", cls=SuggestingGroup)
def history_group() -> None:
    """Move every review, setting and exercise attempt between databases."""


@history_group.command("export")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="File (default: stdout).")
@click.pass_context
def history_export(ctx: click.Context, output: Path | None) -> None:
    """Write the whole history as versioned JSON lines."""
    from quizzer.db.history import write_history

    sessions = state(ctx).sessions.factory()
    now = datetime.now(UTC)
    if output is None:
        write_history(sessions, sys.stdout, now)
        return
    with _atomic(output) as out:
        count = write_history(sessions, out, now)
    console.print(f"wrote {plural(count, 'record')} to {output}", markup=False, soft_wrap=True)


@history_group.command("import")
@click.argument("file", type=click.Path(path_type=Path, allow_dash=True))
@click.pass_context
def history_import(ctx: click.Context, file: Path) -> None:
    """Merge a history file into this database; importing it again adds nothing."""
    from quizzer.db.history import import_records, read_lines

    app = state(ctx)
    with _opened(file) as lines:
        records = list(read_lines(lines, str(file)))  # all parsed before anything is written
    report = import_records(app.sessions.factory(), records, _scheduler(app))
    _print_report(report)


@click.group("db", cls=SuggestingGroup)
def db_group() -> None:
    """The database itself."""


@db_group.command("copy")
@click.option("--to", "target", required=True, metavar="URL", help="Database to copy into.")
@click.pass_context
def db_copy(ctx: click.Context, target: str) -> None:
    """Copy this database's whole history into another (e.g. SQLite to PostgreSQL)."""
    from quizzer.db.engine import open_database
    from quizzer.db.history import export_lines, import_records, read_lines
    from quizzer.db.target import resolve_url

    app = state(ctx)
    url = resolve_url(target)
    if url == app.sessions.url:
        raise QuizzerError("the target is the database in use; name another one")
    lines = export_lines(app.sessions.factory(), datetime.now(UTC))
    records = list(read_lines(lines, app.sessions.url))
    report = import_records(open_database(url), records, _scheduler(app))
    _print_report(report)


def _scheduler(app: AppContext):
    return app.review_service().scheduler


def _print_report(report: ImportReport) -> None:
    console.print(
        f"reviews: {report.reviews_added} added, {report.reviews_known} already there; "
        f"cards: {report.cards_added} added, {report.cards_recomputed} recomputed; "
        f"settings: {report.settings_added} added, {report.settings_kept} kept; "
        f"attempts: {report.attempts_added} added, {report.attempts_known} already there",
        markup=False,
    )


@contextmanager
def _opened(file: Path) -> Iterator[IO[str]]:
    if str(file) == "-":
        yield sys.stdin
        return
    try:
        handle = file.expanduser().open(encoding="utf-8")
    except OSError as exc:
        raise QuizzerError(f"cannot read {file}: {exc.strerror}") from None
    with handle:
        yield handle


@contextmanager
def _atomic(path: Path) -> Iterator[IO[str]]:
    """Write next to `path` and rename into place: no half-written file is ever left."""
    path = path.expanduser()
    if path.is_dir():
        raise QuizzerError(f"output path is a folder: {path}")
    if not path.parent.is_dir():
        raise QuizzerError(f"output folder does not exist: {path.parent}")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
