"""Did-you-mean: one wording for every unknown id and every mistyped command.

``unknown topic 'kvv' (did you mean 'kv'?); see quizzer topics``: the value as typed, the
nearest known one, and the command that lists the valid ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import IO, Any

import click

# The command that lists the valid ids of each kind.
LISTED_BY = {
    "company": "quizzer companies",
    "tier": "quizzer companies",
    "topic": "quizzer topics",
    "interview": "quizzer interviews",
    "question": "quizzer list",
    "exercise": "quizzer exercise",
    "setting": "quizzer config",
    "command": "quizzer --help",
}
SHOWN_LENGTH = 60  # a pasted paragraph is cut, so the error stays one readable line


def _shown(value: str) -> str:
    """The value quoted as Python would, so a newline or tab in it stays on one line."""
    cut = value if len(value) <= SHOWN_LENGTH else value[: SHOWN_LENGTH - 3] + "..."
    return repr(cut)


def nearest(value: str, known: Iterable[str]) -> str | None:
    """The known name closest to `value`, or None when none is close enough."""
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=0.5)
    return close[0] if close else None


def unknown_message(kind: str, value: str, known: Iterable[str], see: str | None = None) -> str:
    """``unknown KIND 'VALUE' (did you mean 'X'?); see COMMAND`` as one line."""
    close = nearest(value, known)
    hint = f" (did you mean {_shown(close)}?)" if close else ""
    listed = see or LISTED_BY.get(kind)
    tail = f"; see {listed}" if listed else ""
    return f"unknown {kind} {_shown(value)}{hint}{tail}"


class UnknownCommandError(click.ClickException):
    """A mistyped command: one line with the nearest command, exit status 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        """Print ``error: unknown command ...`` on stderr, as every other user error."""
        click.echo(f"error: {self.format_message()}", file=file, err=file is None)


class SuggestingGroup(click.Group):
    """A command group whose unknown sub-command error names the nearest one."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Resolve as click does; an unknown name becomes a did-you-mean line."""
        name = args[0]
        if (
            not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            listing = f"{ctx.command_path} --help"
            known = self.list_commands(ctx)
            raise UnknownCommandError(unknown_message("command", name, known, see=listing))
        return super().resolve_command(ctx, args)
