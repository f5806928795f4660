"""`quizzer exercise`: list, scaffold, check (with --watch), hints and the reference."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table
from rich.text import Text

from quizzer.cli.common import console, err_console, state
from quizzer.cli.context import AppContext
from quizzer.errors import QuizzerError

if TYPE_CHECKING:
    from quizzer.db.attempts import AttemptStore
    from quizzer.db.settings import SettingsStore
    from quizzer.exercises.runner import GradeResult

Check = Callable[[], "tuple[GradeResult, Path]"]

DEVICES = ("auto", "cpu", "cuda")


def _stores(app: AppContext) -> tuple[AttemptStore, SettingsStore]:
    from quizzer.db.attempts import AttemptStore
    from quizzer.db.settings import SettingsStore

    return AttemptStore(app.sessions), SettingsStore(app.sessions)


def _root(settings: SettingsStore, directory: Path | None, name: str) -> Path | None:
    """--dir, else where this exercise was scaffolded before, else the configured default."""
    if directory is not None:
        return directory.expanduser().resolve()
    saved = settings.get(f"exercise.root.{name}") or settings.get("workspace")
    return Path(saved) if saved else None


def _list(app: AppContext) -> None:
    from quizzer.bank.model import asked_by_for
    from quizzer.exercises import load_catalog, open_workspace

    catalog = load_catalog()
    attempts, settings = _stores(app)
    best = attempts.best()
    bank = app.bank
    table = Table(header_style="bold", box=None, pad_edge=False)
    for column in ("exercise", "topic", "asked by", "diff", "status", "best"):
        width = 18 if column == "asked by" else None
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=width)
    for entry in catalog:
        if entry.status != "ready":
            table.add_row(entry.name, "", "", "", "[dim]planned[/dim]", "")
            continue
        exercise = catalog.get(entry.name)
        counts, _ = asked_by_for(exercise.meta.themes, bank.interviews.values())
        top = ", ".join(bank.companies[c].name for c, _ in counts.most_common(3))
        asked = f"{sum(counts.values())}: {top}" if counts else "-"
        attempt = best.get(entry.name)
        workspace = open_workspace(entry.name, _root(settings, None, entry.name), catalog)
        if attempt and attempt.status == "passed":
            status, result = (
                "[green]passed[/green]",
                f"{attempt.passed}/{attempt.total} ({attempt.device})",
            )
        elif attempt:
            status, result = "[yellow]in progress[/yellow]", f"{attempt.passed}/{attempt.total}"
        elif workspace.path.exists():
            status, result = "started", "-"
        else:
            status, result = "[dim]not started[/dim]", "-"
        table.add_row(
            entry.name, exercise.meta.topic, Text(asked), exercise.meta.difficulty, status, result
        )
    console.print(table)
    console.print("Start one with: quizzer exercise NAME", style="dim")


def _scaffold(
    app: AppContext, name: str, track: str | None, directory: Path | None, do_reset: bool
) -> None:
    from quizzer.exercises import get_exercise, reset, scaffold

    exercise = get_exercise(name)
    _, settings = _stores(app)
    root = _root(settings, directory, name)
    if do_reset:
        result = reset(name, root, track)
        where = f"; your version is saved in {result.backup}" if result.backup else ""
        console.print(f"Reset {result.file} to the starter{where}")
        path = result.file
    else:
        result = scaffold(name, root, track)
        path = result.file
        if result.is_new:
            console.print(f"Created {path}")
        elif path in result.kept:
            console.print(
                f"{path} has your edits; it was left as it is (use --reset to start over)"
            )
        else:
            console.print(f"{path} is ready")
    if directory is not None:
        settings.set(f"exercise.root.{name}", str(root))
    track_name = exercise.track(track).name
    track_opt = f" --track {track_name}" if track_name != exercise.default_track.name else ""
    console.print(
        f"\n[b]{exercise.title}[/b]  ·  {exercise.meta.difficulty}"
        f"  ·  about {exercise.meta.minutes} min\n"
        f"Instructions: {path.parent / 'README.md'}\n"
        f"Edit {path.name}, then run:  quizzer exercise {name}{track_opt} --check\n"
        f"Stuck?  quizzer exercise {name} --hint"
    )


def _check_once(
    app: AppContext,
    name: str,
    track: str | None,
    device: str,
    root: Path | None,
    timeout: float | None,
) -> tuple[GradeResult, Path]:
    from quizzer.db.attempts import Attempt
    from quizzer.exercises import get_exercise, grade, open_workspace
    from quizzer.exercises.output import clean
    from quizzer.exercises.render import render_result

    exercise = get_exercise(name)
    path = open_workspace(name, root).file(track)
    if not path.is_file():
        raise QuizzerError(f"no solution file at {path}; run 'quizzer exercise {name}' first")
    started = datetime.now(UTC)
    with console.status(f"grading {name} ({exercise.track(track).name}, device {device})..."):
        result = grade(
            exercise,
            path,
            device=device,
            track=track,
            timeout=timeout,  # type: ignore[arg-type]
            on_command=lambda cmd: console.print(
                f"$ {clean(' '.join(cmd))}", style="dim", soft_wrap=True, markup=False
            ),
            guard=True,  # the user's file: a copy or use of the reference is never a pass
        )
    attempts, _ = _stores(app)
    attempts.record(
        Attempt(
            exercise=name,
            track=result.track,
            started_at=started,
            duration_s=result.duration_s,
            device=result.device,
            status=result.status,
            passed=result.count("passed"),
            failed=result.count("failed"),
            errors=result.count("error"),
            skipped=result.count("skipped"),
            metrics={m.name: (m.value, m.unit) for m in result.metrics},
        )
    )
    console.print(render_result(result, verbose=True))  # after the attempt is safely stored
    if result.copied:
        console.print(
            "Write your own solution to have it graded; the reference stays readable "
            f"with: quizzer exercise {name} --solution",
            style="bold",
            markup=False,
        )
    missing = re.search(r"No module named '(torch|numba|numpy)'", result.message)
    if missing:
        console.print(
            f"The graders need {missing.group(1)}: pip install 'quizzer[exercises]'",
            style="bold",
            markup=False,
        )
    return result, path


def _watch(run_check: Check) -> None:
    """Rerun on every save of the solution file; Ctrl-C stops."""
    _, path = run_check()
    seen = path.stat().st_mtime_ns  # the first grade ran on the file as it was before this
    console.print(f"\nWatching {path} (Ctrl-C to stop)", style="dim")
    try:
        while True:
            time.sleep(0.5)
            try:
                now = path.stat().st_mtime_ns
            except FileNotFoundError:
                continue
            if now != seen:
                seen = now
                console.rule(datetime.now().strftime("%H:%M:%S"))
                run_check()
    except KeyboardInterrupt:
        console.print("stopped watching")


def _hint(app: AppContext, name: str) -> None:
    from rich.markdown import Markdown

    from quizzer.exercises import get_exercise

    hints = get_exercise(name).meta.hints
    _, settings = _stores(app)
    key = f"exercise.hints.{name}"
    shown = min(int(settings.get(key, 0)) + 1, len(hints))
    if not hints:
        console.print("This exercise has no hints.")
        return
    settings.set(key, shown)
    for i, hint in enumerate(hints[:shown], 1):
        style = "" if i == shown else "dim"
        console.print(Markdown(f"**Hint {i}/{len(hints)}.** {hint}", style=style))
    if shown == len(hints):
        console.print("That was the last hint.", style="dim")


def _solution(name: str, track: str | None, yes: bool) -> None:
    from rich.syntax import Syntax

    from quizzer.exercises import get_exercise

    exercise = get_exercise(name)
    if not yes and not click.confirm(
        "Show the reference solution? Trying first teaches more", default=False
    ):
        err_console.print("not shown")
        return
    path = exercise.solution_file(track)
    lexer = "cuda" if path.suffix == ".cu" else "python"
    console.print(Syntax(path.read_text(encoding="utf-8"), lexer, line_numbers=True))


@click.command("exercise")
@click.argument("name", required=False)
@click.option("--track", help="Which version to work on (e.g. numba or cuda for cuda-reduce).")
@click.option("--dir", "directory", type=click.Path(path_type=Path), help="Workspace folder.")
@click.option(
    "--reset", "do_reset", is_flag=True, help="Put the starter back (your file is backed up)."
)
@click.option("--check", is_flag=True, help="Grade your solution.")
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True)
@click.option("--watch", is_flag=True, help="With --check: grade again on every save.")
@click.option("--timeout", type=click.FloatRange(min=1), help="Grader time limit in seconds.")
@click.option("--hint", is_flag=True, help="Reveal the next hint.")
@click.option("--solution", is_flag=True, help="Show the reference solution (asks first).")
@click.option("--yes", is_flag=True, help="Do not ask before showing the solution.")
@click.pass_context
def exercise_cmd(
    ctx: click.Context,
    name: str | None,
    track: str | None,
    directory: Path | None,
    do_reset: bool,
    check: bool,
    device: str,
    watch: bool,
    timeout: float | None,
    hint: bool,
    solution: bool,
    yes: bool,
) -> None:
    """Graded coding exercises: list them, or work on NAME."""
    app = state(ctx)
    if name is None:
        _list(app)
        return
    from quizzer.exercises import get_exercise

    get_exercise(name)  # an unknown, planned or unsafe name is one clear error
    if hint:
        _hint(app, name)
    elif solution:
        _solution(name, track, yes)
    elif check or watch:
        _, settings = _stores(app)
        root = _root(settings, directory, name)

        def run_check() -> tuple[GradeResult, Path]:
            return _check_once(app, name, track, device, root, timeout)

        if watch:
            _watch(run_check)
        else:
            result, _ = run_check()
            ctx.exit(0 if result.passed else 1)
    else:
        _scaffold(app, name, track, directory, do_reset)
