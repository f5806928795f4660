"""Did-you-mean for mistyped commands, worded as every unknown id is (`unknown_message`):
``unknown command 'stdy' (did you mean 'study'?); see quizzer --help``."""

from __future__ import annotations

from typing import IO, Any

import click

from quizzer.errors import unknown_message


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
