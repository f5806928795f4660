"""Rich renderables for grading results (no Textual): a headline, per-check table, metrics.

Text from the run is cleaned of terminal controls by the runner; what is shown here is also
passed through :func:`quizzer.exercises.output.clean` and never parsed as Rich markup.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from quizzer.exercises.output import clean, human_size
from quizzer.exercises.runner import GradeResult, TestResult

STATUS_STYLE = {
    "passed": "bold green",
    "failed": "bold red",
    "error": "bold yellow",
    "timeout": "bold magenta",
    "crashed": "bold magenta",
    "copied": "bold red",
}
OUTCOME_MARK = {
    "passed": ("PASS", "green"),
    "failed": ("FAIL", "red"),
    "error": ("ERROR", "yellow"),
    "skipped": ("SKIP", "dim"),
}


def headline(result: GradeResult) -> Text:
    """``PASSED  name: message  (device, track, seconds)``."""
    text = Text()
    text.append(result.status.upper(), style=STATUS_STYLE.get(result.status, "bold"))
    text.append(f"  {result.exercise}: {clean(result.message)}")
    text.append(
        f"  ({result.device}, track {result.track}, {result.duration_s:.1f} s)", style="dim"
    )
    return text


def _message(test: TestResult, width: int) -> str:
    first = clean(test.message).strip().splitlines()
    text = "\n".join(first[:6])
    return text if len(text) <= width else text[: width - 3] + "..."


def checks_table(result: GradeResult, show_passed: bool = True, width: int = 600) -> Table:
    """One row per check (passed ones only when ``show_passed``): mark, name, why."""
    table = Table(show_header=True, header_style="bold", expand=False, box=None, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("check", overflow="fold")
    table.add_column("why", overflow="fold")
    for test in result.tests:
        if test.outcome == "passed" and not show_passed:
            continue
        mark, style = OUTCOME_MARK.get(test.outcome, (test.outcome.upper(), "bold"))
        why = _message(test, width) if test.outcome != "passed" else ""
        table.add_row(Text(mark, style=style), Text(clean(test.name)), Text(why))
    return table


def metrics_table(result: GradeResult) -> Table | None:
    """The measurements the checks recorded, or None when there are none."""
    if not result.metrics:
        return None
    table = Table(show_header=True, header_style="bold", box=None, title="measurements")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for metric in result.metrics:
        table.add_row(Text(clean(metric.name)), f"{metric.value:.4g}", Text(clean(metric.unit)))
    return table


def render_result(result: GradeResult, verbose: bool = False) -> RenderableType:
    """Everything a user needs after ``--check``; ``verbose`` adds passed checks and the command."""
    parts: list[RenderableType] = [headline(result)]
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
    if verbose:
        parts.append(Text(f"$ {clean(result.command_line)}", style="dim"))
    return Group(*parts)
