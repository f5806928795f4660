"""`quizzer exercise`: list, scaffold, check (with --watch), hints and the reference."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from quizzer.cli.common import console, err_console, print_unwrapped, state
from quizzer.cli.context import AppContext
from quizzer.errors import QuizzerError
from quizzer.review.model import plural

if TYPE_CHECKING:
    from quizzer.db.attempts import Attempt, AttemptStore
    from quizzer.db.settings import SettingsStore
    from quizzer.exercises.catalog import Catalog, Exercise
    from quizzer.exercises.runner import GradeResult

Check = Callable[[], "tuple[GradeResult, Path]"]

DEVICES = ("auto", "cpu", "cuda")
INSTALL_HINT = (
    "on a CPU-only machine first `pip install torch==2.13.0` (the CPU build), then "
    "`pip install 'quizzer[exercises]'` (alone, that pulls the multi-GB CUDA build of torch)"
)


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


def _is_terminal() -> bool:
    return console.is_terminal


def _show(renderable: RenderableType) -> None:
    """Print to the terminal at its width; into a pipe or file without wrapping lines."""
    if _is_terminal():
        console.print(renderable)
        return
    print_unwrapped(renderable)


def _asked(app: AppContext, catalog: Catalog) -> dict[str, tuple[int, str]]:
    """Per ready exercise: how many interview write-ups ask it, and its top companies."""
    from quizzer.bank.model import asked_by_for

    bank = app.bank
    asked: dict[str, tuple[int, str]] = {}
    for exercise in catalog.ready():
        counts, _ = asked_by_for(exercise.meta.themes, bank.interviews.values())
        top = ", ".join(bank.companies[c].name for c, _ in counts.most_common(3))
        asked[exercise.name] = (sum(counts.values()), top)
    return asked


def _history(app: AppContext, catalog: Catalog) -> dict[str, list[Attempt]]:
    attempts, _ = _stores(app)
    return {e.name: attempts.history(e.name) for e in catalog if e.status == "ready"}


_STATUS_STYLE = {"passed": "green", "compiled": "cyan", "in progress": "yellow"}


def _list(app: AppContext) -> None:
    from quizzer.exercises import load_catalog, open_workspace
    from quizzer.exercises.progress import best_cell, next_exercise, progress_line, status_of

    catalog = load_catalog()
    _, settings = _stores(app)
    asked, history = _asked(app, catalog), _history(app, catalog)
    table = Table(header_style="bold", box=None, pad_edge=False)
    for column in ("exercise", "topic", "asked by", "diff", "status", "best"):
        width = 18 if column == "asked by" else None
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=width)
    passed = []
    for entry in catalog:
        if entry.status != "ready":
            table.add_row(entry.name, "", "", "", Text("planned", style="dim"), "")
            continue
        exercise = catalog.get(entry.name)
        count, top = asked[entry.name]
        workspace = open_workspace(entry.name, _root(settings, None, entry.name), catalog)
        status = status_of(history[entry.name], workspace.path.exists())
        if status == "passed":
            passed.append(entry.name)
        table.add_row(
            entry.name,
            exercise.meta.topic,
            Text(f"{count}: {top}" if count else "-"),
            exercise.meta.difficulty,
            Text(status, style=_STATUS_STYLE.get(status, "dim")),
            Text(best_cell([t.name for t in exercise.meta.tracks], history[entry.name])),
        )
    _show(table)
    following = next_exercise({n: c for n, (c, _) in asked.items()}, passed)
    tail = f"  ·  next: quizzer exercise {following}" if following else ""
    console.print(progress_line(len(passed), len(asked)) + tail, markup=False, soft_wrap=True)
    console.print("Start one with: quizzer exercise NAME", style="dim")


def _passed_names(history: dict[str, list[Attempt]]) -> list[str]:
    from quizzer.exercises.progress import is_passed

    return [name for name, attempts in history.items() if is_passed(attempts)]


def _next(app: AppContext, directory: Path | None) -> None:
    """Scaffold the most asked exercise not passed yet (``quizzer exercise next``)."""
    from quizzer.exercises import load_catalog
    from quizzer.exercises.progress import next_exercise, progress_line

    catalog = load_catalog()
    asked, passed = _asked(app, catalog), _passed_names(_history(app, catalog))
    name = next_exercise({n: c for n, (c, _) in asked.items()}, passed)
    console.print(progress_line(len(passed), len(asked)), markup=False)
    if name is None:
        console.print("Every exercise is passed.", style="bold green")
        return
    ups = plural(asked[name][0], "interview write-up")
    console.print(f"Next: {name} (asked in {ups})\n", markup=False)
    _scaffold(app, name, None, directory, do_reset=False)


def _offer_next(app: AppContext, name: str) -> None:
    """After a pass: ``passed! next: quizzer exercise NAME``."""
    from quizzer.exercises import load_catalog
    from quizzer.exercises.progress import next_exercise, progress_line

    catalog = load_catalog()
    asked = _asked(app, catalog)
    passed = {*_passed_names(_history(app, catalog)), name}
    following = next_exercise({n: c for n, (c, _) in asked.items()}, passed)
    if following:
        console.print(f"passed! next: quizzer exercise {following}", style="bold", markup=False)
    else:
        line = progress_line(len(passed), len(asked))
        console.print(f"passed! every exercise is done ({line})", style="bold", markup=False)


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
            console.print(f"Created {path}", soft_wrap=True)
        elif path in result.kept:
            console.print(
                f"{path} has your edits; it was left as it is (use --reset to start over)"
            )
        else:
            console.print(f"{path} is ready", soft_wrap=True)
    if directory is not None:
        settings.set(f"exercise.root.{name}", str(root))
    track_name = exercise.track(track).name
    track_opt = f" --track {track_name}" if track_name != exercise.default_track.name else ""
    console.print(
        f"\n[b]{exercise.title}[/b]  ·  {exercise.meta.difficulty}"
        f"  ·  about {exercise.meta.minutes} min\n"
        f"Instructions: {path.parent / 'README.md'}\n"
        f"Edit {path.name}, then run:  quizzer exercise {name}{track_opt} --check\n"
        f"Stuck?  quizzer exercise {name} --hint",
        soft_wrap=not _is_terminal(),
    )


def _check_once(
    app: AppContext,
    name: str,
    track: str | None,
    device: str,
    root: Path | None,
    timeout: float | None,
) -> tuple[GradeResult, Path]:
    from quizzer.exercises import get_exercise, open_workspace
    from quizzer.exercises.render import render_result
    from quizzer.exercises.starter import not_started

    exercise = get_exercise(name)
    path = open_workspace(name, root).file(track)
    if not path.is_file():
        raise QuizzerError(f"no solution file at {path}; run 'quizzer exercise {name}' first")
    result = not_started(exercise, path, track)
    if result is None:
        result = _grade(app, exercise, path, track, device, timeout)
    _show(render_result(result, verbose=True))  # after the attempt is safely stored
    _advice(app, result, path)
    return result, path


def _grade(
    app: AppContext,
    exercise: Exercise,
    path: Path,
    track: str | None,
    device: str,
    timeout: float | None,
) -> GradeResult:
    """Run the grader (its command printed once, unwrapped) and store the attempt."""
    from quizzer.db.attempts import Attempt
    from quizzer.exercises import grade
    from quizzer.exercises.output import clean

    started = datetime.now(UTC)
    with console.status(f"grading {exercise.name} ({exercise.track(track).name}, {device})..."):
        result = grade(
            exercise,
            path,
            device=device,
            track=track,
            timeout=timeout,  # type: ignore[arg-type]
            on_command=lambda cmd: console.print(
                f"$ {clean(shlex.join(cmd))}", style="dim", soft_wrap=True, markup=False
            ),
            guard=True,  # the user's file: a copy or use of the reference is never a pass
        )
    attempts, _ = _stores(app)
    attempts.record(
        Attempt(
            exercise=exercise.name,
            track=result.track,
            started_at=started,
            duration_s=result.duration_s,
            device=result.device,
            status=result.verdict,  # a compile-only run is stored as such, never as a pass
            passed=result.count("passed"),
            failed=result.count("failed"),
            errors=result.count("error"),
            skipped=result.count("skipped"),
            metrics={m.name: (m.value, m.unit) for m in result.metrics},
        )
    )
    return result


def _say(text: str, style: str = "bold") -> None:
    console.print(text, style=style, markup=False, soft_wrap=True)


def _advice(app: AppContext, result: GradeResult, path: Path) -> None:
    """What to do next: write the code, install the graders' needs, or the next exercise."""
    name = result.exercise
    track = f" --track {result.track}" if result.track != _default_track(name) else ""
    if result.verdict == "not-started":
        _say(f"Edit {path}, then run:  quizzer exercise {name}{track} --check", style="")
    elif result.copied:
        _say(
            "Write your own solution to have it graded; the reference stays readable "
            f"with: quizzer exercise {name} --solution"
        )
    elif missing := re.search(r"No module named '(torch|numba|numpy)'", result.message):
        _say(f"The graders need {missing.group(1)}: {INSTALL_HINT}")
    elif result.verdict == "passed":
        _offer_next(app, name)


def _default_track(name: str) -> str:
    from quizzer.exercises import get_exercise

    return get_exercise(name).default_track.name


def _watch(path: Path, run_check: Check) -> None:
    """Grade now and again on every save of the solution file; Ctrl-C stops."""
    seen = path.stat().st_mtime_ns if path.exists() else 0
    _say(f"Watching {path}: grading again on every save (Ctrl-C to stop)", style="dim")
    run_check()
    try:
        while True:
            time.sleep(0.5)
            try:
                now = path.stat().st_mtime_ns
            except FileNotFoundError:
                continue
            if now != seen:
                seen = now
                console.rule(datetime.now().strftime("%H:%M:%S"), style="dim")
                run_check()
    except KeyboardInterrupt:
        console.print("stopped watching", style="dim")


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
    from quizzer.exercises import get_exercise

    exercise = get_exercise(name)
    if not yes and not click.confirm(
        "Show the reference solution? Trying first teaches more", default=False
    ):
        err_console.print("not shown")
        return
    path = exercise.solution_file(track)
    source = path.read_text(encoding="utf-8")
    if not _is_terminal():
        click.echo(source, nl=not source.endswith("\n"))  # the file as it is, lines whole
        return
    from quizzer.exercises.render import highlighted

    lexer = "cuda" if path.suffix == ".cu" else "python"
    click.echo_via_pager(highlighted(source, lexer, console.width))


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
    """Graded coding exercises: list them, work on NAME, or `next` (the most asked one
    not passed yet)."""
    app = state(ctx)
    if name is None:
        _list(app)
        return
    if name == "next":
        _next(app, directory)
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
            from quizzer.exercises import open_workspace

            _watch(open_workspace(name, root).file(track), run_check)
        else:
            result, _ = run_check()
            ctx.exit(0 if result.verdict in ("passed", "compile-only") else 1)
    else:
        _scaffold(app, name, track, directory, do_reset)
