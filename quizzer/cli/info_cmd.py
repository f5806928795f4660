"""`quizzer info` and the second line of `quizzer --version`: what this quizzer works with.

Neither opens the database: its URL is worked out from --db, $QUIZZER_DB or the default.
"""

from __future__ import annotations

import json
import platform

import click

from quizzer import __version__
from quizzer.cli.common import bank_size, console, state
from quizzer.cli.context import Settings


def database_line(settings: Settings) -> str:
    """``database: URL``, the password hidden; no folder is created and nothing opens."""
    from quizzer.db.target import shown_url

    return f"database: {shown_url(settings.chosen_db_url)}"


def print_version(settings: Settings) -> None:
    """``quizzer X.Y.Z`` and the database in use, for `quizzer --version`."""
    click.echo(f"quizzer {__version__}")
    click.echo(database_line(settings))


@click.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def info_cmd(ctx: click.Context, as_json: bool) -> None:
    """Version, Python, bank size, database and data folder."""
    from quizzer.db.target import shown_url
    from quizzer.paths import bank_dir, user_data_dir

    app = state(ctx)
    bank = app.bank
    counts = {**bank.counts(), "exercises": len(bank.exercises)}
    facts: dict[str, object] = {
        "version": __version__,
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "bank": counts,
        "bank_dir": str(bank_dir()),
        "extra_banks": [str(p) for p in app.settings.extra_banks],
        "database": shown_url(app.settings.chosen_db_url),
        "data_dir": str(user_data_dir()),
    }
    if as_json:
        click.echo(json.dumps(facts, indent=2))
        return
    size = bank_size(counts)
    lines = [
        ("quizzer", __version__),
        ("python", str(facts["python"])),
        ("bank", f"{size} ({facts['bank_dir']})"),
        *(("extra bank", str(p)) for p in app.settings.extra_banks),
        ("database", str(facts["database"])),
        ("data dir", str(facts["data_dir"])),
    ]
    for label, value in lines:
        console.print(f"{label + ':':<12}{value}", markup=False, soft_wrap=True)
