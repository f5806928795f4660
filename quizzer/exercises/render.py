"""Rich renderables for grading results (no Textual): per-check rows, skips, metrics, verdict.

The layout reads top to bottom and ends on the verdict: passed checks, then failures with
their reasons, then one line per reason checks were skipped, then the measurements and the
summary line. Check names are never cut or wrapped (the reason wraps instead), and a name
shared by two checks is shown with as much of its test id as tells them apart.

Text from the run is cleaned of terminal controls by the runner; what is shown here is also
passed through :func:`quizzer.exercises.output.clean` and never parsed as Rich markup.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from quizzer.exercises.output import clean, human_size
from quizzer.exercises.runner import GradeResult, TestResult

STATUS_STYLE = {
    "passed": "bold green",
    "compile-only": "bold cyan",
    "failed": "bold red",
    "error": "bold yellow",
    "timeout": "bold magenta",
    "crashed": "bold magenta",
    "copied": "bold red",
    "not-started": "bold yellow",
}
OUTCOME_MARK = {
    "passed": ("PASS", "green"),
    "failed": ("FAIL", "red"),
    "error": ("ERROR", "yellow"),
}
COMPILE_ONLY = "compiled and inspected; not run: needs a CUDA GPU"
_MIN_WHY = 30  # below this the reason goes under the check's name
_WHY_LINES = 6
_ON_CPU = re.compile(r"\s*\(running on cpu\)$")


def display_names(tests: Iterable[TestResult]) -> dict[str, str]:
    """Each check's shortest distinct name: ``test_x[a]``, or ``test_b.py::test_x[a]`` when
    two files (or classes) hold a check of that name."""
    parts = {t.nodeid: t.nodeid.split("::") for t in tests}
    depth = dict.fromkeys(parts, 1)
    while True:
        shown = {n: "::".join(p[-depth[n] :]) for n, p in parts.items()}
        seen = Counter(shown.values())
        clashes = [n for n in parts if seen[shown[n]] > 1 and depth[n] < len(parts[n])]
        if not clashes:
            return {n: clean(s) for n, s in shown.items()}
        for nodeid in clashes:
            depth[nodeid] += 1


def skip_lines(tests: Iterable[TestResult]) -> list[str]:
    """One line per reason: ``23 checks skipped: need a CUDA GPU`` (most common first)."""
    reasons = Counter(
        _ON_CPU.sub("", clean(t.message).strip().splitlines()[0] if t.message.strip() else "")
        for t in tests
        if t.outcome == "skipped"
    )
    lines = []
    for reason, count in reasons.most_common():
        if count > 1 and reason.startswith("needs "):
            reason = "need " + reason[len("needs ") :]
        noun = "check" if count == 1 else "checks"
        lines.append(f"{count} {noun} skipped" + (f": {reason}" if reason else ""))
    return lines


def _why(test: TestResult, width: int = 600) -> str:
    lines = clean(test.message).strip().splitlines()
    text = "\n".join(lines[:_WHY_LINES])
    return text if len(text) <= width else text[: width - 3] + "..."


class ChecksView:
    """The checks that ran (passed ones only when ``show_passed``), failures after passes,
    then the skip lines. Laid out as a table when the reasons have room beside the names,
    else each reason under its check's name."""

    def __init__(self, result: GradeResult, show_passed: bool = True) -> None:
        names = display_names(result.tests)
        ran = [t for t in result.tests if t.outcome != "skipped"]
        ran.sort(key=lambda t: t.outcome in ("failed", "error"))  # stable: grader order kept
        self.rows = [
            (t.outcome, names[t.nodeid], _why(t) if t.outcome != "passed" else "")
            for t in ran
            if show_passed or t.outcome != "passed"
        ]
        self.skips = skip_lines(result.tests)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        marks = max([4, *(len(OUTCOME_MARK.get(o, (o,))[0]) for o, _, _ in self.rows)])
        if self.rows:
            widest = max(len(name) for _, name, _ in self.rows)
            room = options.max_width - marks - widest - 4
            yield self._table(widest) if room >= _MIN_WHY else self._stacked()
        for line in self.skips:
            yield Text(f"{'SKIP':<{marks}}  {line}", style="dim")

    def _marks(self) -> Iterator[tuple[Text, str, str]]:
        for outcome, name, why in self.rows:
            mark, style = OUTCOME_MARK.get(outcome, (outcome.upper(), "bold"))
            yield Text(mark, style=style), name, why

    def _table(self, widest: int) -> Table:
        header = any(why for _, _, why in self.rows)
        table = Table(show_header=header, header_style="bold", box=None, pad_edge=False)
        table.add_column("", no_wrap=True)
        table.add_column("check", no_wrap=True, min_width=widest)
        table.add_column("why", overflow="fold")
        for mark, name, why in self._marks():
            table.add_row(mark, Text(name, no_wrap=True), Text(why))
        return table

    def _stacked(self) -> Table:
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column("", no_wrap=True)
        table.add_column("check", overflow="fold")
        for mark, name, why in self._marks():
            body = Text(name, style="bold")
            if why:
                body.append("\n" + why, style="")
            table.add_row(mark, body)
        return table


class Headline:
    """``FAILED  name: message  (device, track, seconds)``; when it does not fit on one
    line the part in brackets moves to its own line instead of breaking inside it."""

    def __init__(self, result: GradeResult) -> None:
        verdict = result.verdict
        self.label = Text(_label(verdict), style=STATUS_STYLE.get(verdict, "bold"))
        if verdict == "compile-only":
            self.body = f" — {COMPILE_ONLY}"
            self.meta = f"({result.exercise}, {_seconds(result)})"
        elif verdict == "not-started":  # "not started: implement `X` first"
            self.label = Text("not started:", style=STATUS_STYLE[verdict])
            self.body = clean(result.message).removeprefix("not started:")
            self.meta = f"({result.exercise}: {result.solution_path.name} is still the starter)"
        else:
            self.body = f"  {result.exercise}: {clean(result.message)}"
            self.meta = f"({_seconds(result)})"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = self.label + Text(self.body)
        if line.cell_len + 2 + len(self.meta) <= options.max_width:
            yield line + Text(f"  {self.meta}", style="dim")
        else:
            yield line
            yield Text(self.meta, style="dim", no_wrap=True, overflow="fold")


def _label(verdict: str) -> str:
    if verdict == "compile-only":
        return "COMPILE CHECKS PASSED"
    return verdict.upper()


def _seconds(result: GradeResult) -> str:
    return f"{result.device}, track {result.track}, {result.duration_s:.1f} s"


def headline(result: GradeResult) -> Headline:
    """The summary line of a run (see :class:`Headline`)."""
    return Headline(result)


def checks_table(result: GradeResult, show_passed: bool = True) -> ChecksView:
    """The per-check rows and skip lines of a run (see :class:`ChecksView`)."""
    return ChecksView(result, show_passed)


def metrics_table(result: GradeResult) -> Table | None:
    """The measurements the checks recorded, or None when there are none."""
    if not result.metrics:
        return None
    table = Table(show_header=True, header_style="bold", box=None, title="measurements")
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for metric in result.metrics:
        table.add_row(Text(clean(metric.name)), f"{metric.value:.4g}", Text(clean(metric.unit)))
    return table


def highlighted(source: str, lexer: str, width: int) -> str:
    """``source`` with colours and line numbers for a pager, at least ``width`` wide and wide
    enough that no line is cut."""
    from rich.syntax import Syntax

    longest = max((len(line) for line in source.splitlines()), default=0)
    page = Console(width=max(width, longest + 8), file=io.StringIO(), force_terminal=True)
    with page.capture() as captured:
        page.print(Syntax(source, lexer, line_numbers=True))
    return captured.get()


def render_result(result: GradeResult, verbose: bool = False) -> RenderableType:
    """Everything a user needs after ``--check``, ending on the summary line; ``verbose``
    lists the passed checks too."""
    parts: list[RenderableType] = []
    if result.tests:
        parts.append(checks_table(result, show_passed=verbose))
    elif result.output.strip():
        parts.append(Text(clean(result.output).strip()[-2000:], style="dim"))
    if result.output_dropped and result.tests:  # otherwise the output says it
        dropped = human_size(result.output_dropped)
        parts.append(Text(f"output truncated: {dropped} dropped", style="dim"))
    metrics = metrics_table(result)
    if metrics is not None:
        parts.append(metrics)
    parts.append(headline(result))
    return Group(*parts)
