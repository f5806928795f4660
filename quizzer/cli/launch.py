"""Opening the terminal app, and the `quizzer` console script.

Bare `quizzer` opens home without loading the command-line parser: the app's first frame
comes sooner by the parser's import time. Everything else goes through `quizzer.cli.main`.
"""

from __future__ import annotations

import sys

from quizzer.bank.model import Filters
from quizzer.cli.context import AppContext, Settings


def launch(
    context: AppContext,
    *,
    home: bool,
    filters: Filters | None = None,
    cram: bool = False,
    new_limit: int | None = None,
    extra_new: int = 0,
) -> None:
    service = context.review_service(quick=True)
    if service.quick is None:
        # A first launch, an older schema or another kind of database: open (create,
        # migrate) it here, where a failure is one line. Otherwise the app opens it in the
        # background once the first card is on screen.
        service.open()
    service.adopt_aliases()
    if extra_new:
        total = service.add_new_today(extra_new)
        print(f"Today's new-card limit is raised by {total}.")
    from quizzer.tui.app import QuizzerApp

    app = QuizzerApp(
        service,
        filters=filters,
        cram=cram,
        new_limit=new_limit,
        start_study=not home,
        first_run=service.needs_setup(),
    )
    if home:
        app.preload_home()
    else:
        app.preload_study()
    app.run()


def run() -> None:
    """The `quizzer` console script."""
    if len(sys.argv) > 1:
        from quizzer.cli.main import run as run_cli

        run_cli()
        return
    sys.exit(open_home())


def open_home() -> int:
    """Bare `quizzer`: home on the database of `$QUIZZER_DB` or the default file; expected
    failures become one line on stderr, as in `quizzer.cli.main.entry`."""
    try:
        launch(AppContext(Settings()), home=True)
    except KeyboardInterrupt:
        print("aborted", file=sys.stderr)
        return 130
    except Exception as exc:
        code = report(exc)
        if code is None:
            raise
        return code
    return 0


def report(exc: Exception) -> int | None:
    """Print an expected failure as one line and return its exit code; None otherwise."""
    from quizzer.errors import QuizzerError

    if isinstance(exc, QuizzerError):
        _say(f"error: {exc}")
        return exc.exit_code
    message = _describe(exc)
    if message is None:
        return None
    _say(f"error: {message}")
    return 2


def _say(line: str) -> None:
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(line, markup=False)


def _describe(exc: Exception) -> str | None:
    """Database and OS errors the user can cause, in one line; None for anything else."""
    from quizzer.db.errors import describe_db_error

    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    return describe_db_error(exc)
