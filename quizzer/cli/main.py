"""Entry point: global options, sub-commands, and the one place errors become messages."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from quizzer.cli.common import err_console
from quizzer.cli.context import AppContext, Settings
from quizzer.cli.suggest import SuggestingGroup

# Each command's module is imported only when that command runs, so a quick command does
# not pay for the imports of the others.
COMMANDS = {
    "bank": ("quizzer.cli.bank_cmd", "bank_group"),
    "companies": ("quizzer.cli.discover_cmd", "companies_cmd"),
    "config": ("quizzer.cli.config_cmd", "config_group"),
    "db": ("quizzer.cli.history_cmd", "db_group"),
    "exercise": ("quizzer.cli.exercise_cmd", "exercise_cmd"),
    "export": ("quizzer.cli.export_cmd", "export_group"),
    "history": ("quizzer.cli.history_cmd", "history_group"),
    "import": ("quizzer.cli.import_cmd", "import_group"),
    "info": ("quizzer.cli.info_cmd", "info_cmd"),
    "interviews": ("quizzer.cli.discover_cmd", "interviews_cmd"),
    "list": ("quizzer.cli.browse_cmd", "list_cmd"),
    "optimize": ("quizzer.cli.optimize_cmd", "optimize_cmd"),
    "plan": ("quizzer.cli.plan_cmd", "plan_group"),
    "setup": ("quizzer.cli.config_cmd", "setup_cmd"),
    "show": ("quizzer.cli.browse_cmd", "show_cmd"),
    "stats": ("quizzer.cli.stats_cmd", "stats_cmd"),
    "study": ("quizzer.cli.study_cmd", "study_cmd"),
    "topics": ("quizzer.cli.discover_cmd", "topics_cmd"),
}


class LazyGroup(SuggestingGroup):
    """The root group: commands imported on first use; a mistyped one gets a suggestion."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command called `cmd_name`, its module imported now; None if there is none."""
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command


@click.group(
    name="quizzer",
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--db", metavar="URL", help="SQLAlchemy database URL (default: $QUIZZER_DB or a local file)."
)
@click.option(
    "--bank",
    "banks",
    multiple=True,
    type=click.Path(path_type=Path),
    help="An extra folder of question files (repeatable).",
)
@click.option(
    "--version", "show_version", is_flag=True, help="Show the version and the database in use."
)
@click.pass_context
def cli(ctx: click.Context, db: str | None, banks: tuple[Path, ...], show_version: bool) -> None:
    """Spaced repetition and graded exercises for AI-infrastructure interviews.

    Run without a command to open the study app.
    """
    ctx.obj = AppContext(Settings(db_url=db, extra_banks=banks))
    if show_version:
        from quizzer.cli.info_cmd import print_version

        print_version(ctx.obj.settings)
        ctx.exit(0)
    if ctx.invoked_subcommand is None:
        from quizzer.cli.launch import launch

        launch(ctx.obj, home=True)


def entry(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code; expected failures become one line on stderr."""
    from quizzer.cli.launch import report

    try:
        code = cli.main(args=argv, prog_name="quizzer", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code or 0
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        return 130
    except Exception as exc:  # ours, and database and OS errors the user can cause
        reported = report(exc)
        if reported is None:
            raise
        return reported
    return code if isinstance(code, int) else 0


def run() -> None:
    """`quizzer` with arguments (bare `quizzer` starts in `quizzer.cli.launch.run`)."""
    sys.exit(entry())
