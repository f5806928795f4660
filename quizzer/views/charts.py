"""Progress charts as Rich renderables: a review heatmap, the due forecast as bars, true
retention and readiness by week. Each fits the width it is given (80 columns hold all of
them whole; narrower, the heatmap and the forecast show fewer weeks or days)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from quizzer.review.model import plural
from quizzer.review.progress import Progress

DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
HEAT_COLORS = ("#2d333b", "#0e4429", "#006d32", "#26a641", "#39d353")  # none, then 4 levels
HEAT_CELL = "■"
LABEL = 4  # "Mon " before the heatmap's cells and the forecast's axis
BAR_HEIGHT = 6  # rows of the forecast's bars
EIGHTHS = " ▁▂▃▄▅▆▇█"
HORIZONTAL = " ▏▎▍▌▋▊▉█"
WEEKS_SHOWN = 12  # weeks in the retention and readiness tables (fewer for a newer history)


def heat_bounds(counts: Iterable[int]) -> tuple[int, int, int]:
    """Upper bounds of the first three intensity levels: the quartiles of the busy days."""
    busy = sorted(c for c in counts if c)
    if not busy:
        return 1, 2, 3

    def quantile(p: float) -> int:
        return busy[int(p * (len(busy) - 1))]

    first = max(1, quantile(0.25))
    second = max(first + 1, quantile(0.5))
    return first, second, max(second + 1, quantile(0.75))


def heat_level(count: int, bounds: tuple[int, int, int]) -> int:
    """0 for no reviews, else 1-4 by the bounds."""
    if count <= 0:
        return 0
    return 1 + sum(count > b for b in bounds)


def _span(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


class ReviewHeatmap:
    """Answers per study day: weeks as columns (oldest left), weekdays as rows, month
    names above, a legend of what each shade counts below."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(LABEL + 1, LABEL + len(self.progress.weeks))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        p = self.progress
        shown = max(1, min(len(p.weeks), options.max_width - LABEL))
        mondays = p.weeks[-shown:]
        days = [m + timedelta(days=d) for m in mondays for d in range(7)]
        counts = [p.reviews_on(d) for d in days if d <= p.today]
        bounds = heat_bounds(counts)
        span = "last 12 months" if shown == len(p.weeks) else f"last {plural(shown, 'week')}"
        total = sum(counts)
        title = Text.assemble(
            ("Reviews by day", "bold"),
            f", {span}: {plural(total, 'answer')} on {plural(sum(1 for c in counts if c), 'day')}",
        )
        if total:
            busiest = max((d for d in days if d <= p.today), key=p.reviews_on)
            title.append(f"; busiest {busiest.day} {busiest:%b} ({p.reviews_on(busiest)})")
        yield title
        yield Text(" " * LABEL + month_labels(mondays), style="dim")
        for weekday in range(7):
            row = Text(f"{DAY_NAMES[weekday]:<{LABEL}}", style="dim")
            for monday in mondays:
                day = monday + timedelta(days=weekday)
                if day > p.today:
                    row.append(" ")
                else:
                    level = heat_level(p.reviews_on(day), bounds)
                    row.append(HEAT_CELL, style=HEAT_COLORS[level])
            yield row
        yield heat_legend(bounds)


def heat_legend(bounds: tuple[int, int, int]) -> Text:
    """'■ 0  ■ 1-2  ■ 3-5 ...': the answers a day each shade stands for."""
    spans = ["0", _span(1, bounds[0]), _span(bounds[0] + 1, bounds[1])]
    spans += [_span(bounds[1] + 1, bounds[2]), _span(bounds[2] + 1, None)]
    legend = Text(" " * LABEL)
    for color, span in zip(HEAT_COLORS, spans, strict=True):
        legend.append(HEAT_CELL, style=color)
        legend.append(f" {span}  ", style="dim")
    legend.append("answers a day", style="dim")
    return legend


def month_labels(mondays: Sequence[date]) -> str:
    """Month names over the week columns: each over the week its 1st falls in, and the
    first column's month when there is room before the next name."""
    line = [" "] * len(mondays)
    starts = []
    for column, monday in enumerate(mondays):
        first = next(
            (monday + timedelta(days=d) for d in range(7) if (monday + timedelta(days=d)).day == 1),
            None,
        )
        if first is not None:
            starts.append((column, first.strftime("%b")))
    if mondays and (not starts or starts[0][0] >= 4):
        starts.insert(0, (0, mondays[0].strftime("%b")))
    free = 0
    for column, name in starts:
        if column >= free and column + len(name) <= len(line):
            line[column : column + len(name)] = name
            free = column + len(name) + 1
    return "".join(line)


class ForecastChart:
    """Cards falling due per study day as vertical bars, today (overdue included) first,
    with weekday and date labels under the bars; as many days as the width holds."""

    def __init__(self, forecast: Sequence[tuple[datetime, int]]) -> None:
        self.forecast = list(forecast)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(LABEL + 8, LABEL + 2 + 2 * len(self.forecast))

    def shown(self, width: int) -> int:
        """How many days fit in `width` columns."""
        axis = len(str(max((n for _, n in self.forecast), default=0))) + 2
        return max(1, min(len(self.forecast), (width - axis) // 2))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        days = self.forecast[: self.shown(options.max_width)]
        counts = [n for _, n in days]
        top = max(counts, default=0)
        total = sum(counts)
        title = Text.assemble(
            ("Due in the next ", "bold"),
            (plural(len(days), "day"), "bold"),
            f": {plural(total, 'card')}",
        )
        if top:
            day, _ = days[counts.index(top)]
            title.append(
                f"; busiest {forecast_label(days, counts.index(top))} {day.day} {day:%b} ({top})"
            )
        yield title
        width = len(str(top))
        units = [0 if not n else max(1, round(n / top * BAR_HEIGHT * 8)) for n in counts]
        for row in reversed(range(BAR_HEIGHT)):
            axis = "0" if row == 0 else (str(top) if row == BAR_HEIGHT - 1 and top else "")
            line = Text(f"{axis:>{width}} {'┤' if axis else '│'}", style="dim")
            for n, unit in enumerate(units):
                fill = min(8, max(0, unit - row * 8))
                line.append(EIGHTHS[fill], style="yellow" if n == 0 else "#58a6ff")
                line.append(" ")
            yield line
        ticks, labels = forecast_axis(days)
        yield Text(" " * width + " └" + ticks, style="dim")
        yield Text(" " * (width + 2) + labels, style="dim")


def forecast_label(days: Sequence[tuple[datetime, int]], index: int) -> str:
    """'today', 'tomorrow', or the weekday name."""
    return ("today", "tomorrow")[index] if index < 2 else days[index][0].strftime("%a")


def forecast_axis(days: Sequence[tuple[datetime, int]]) -> tuple[str, str]:
    """The tick line and the label line under the bars: 'today', then each Monday's
    weekday and date ('Mon 7'), where there is room."""
    ticks = ["─"] * (2 * len(days))
    labels = [" "] * (2 * len(days) + 8)
    free = 0
    for n, (day, _) in enumerate(days):
        if n and day.weekday() != 0:
            continue
        name = "today" if n == 0 else f"{day:%a} {day.day}"
        x = 2 * n
        if x >= free:
            labels[x : x + len(name)] = name
            ticks[x] = "┬"
            free = x + len(name) + 1
    return "".join(ticks), "".join(labels).rstrip()


def bar(share: float, width: int) -> str:
    """A horizontal bar `share` (0-1) of `width` cells, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, share)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (HORIZONTAL[part] if part else "")).ljust(width)


def _recent_weeks(progress: Progress) -> int:
    if progress.first_review is None:
        return min(WEEKS_SHOWN, len(progress.weeks))
    monday = progress.first_review - timedelta(days=progress.first_review.weekday())
    since = (progress.weeks[-1] - monday).days // 7 + 1
    return max(1, min(WEEKS_SHOWN, since, len(progress.weeks)))


def week_name(progress: Progress, monday: date) -> str:
    """'this week', or the date of the Monday it starts ('2 Mar')."""
    return "this week" if monday == progress.weeks[-1] else f"{monday.day} {monday:%b}"


def retention_table(progress: Progress, desired: float) -> list[Text | Table]:
    """True retention per recent week as bars, with the count behind each."""
    shown = _recent_weeks(progress)
    title = Text.assemble(("True retention by week", "bold"), f", last {plural(shown, 'week')}")
    table = Table(
        "week of", "", "recalled", "answers", box=None, header_style="bold", pad_edge=False
    )
    for week in progress.retention[-shown:]:
        rate = week.rate
        if rate is None:
            table.add_row(week_name(progress, week.week), Text("-", style="dim"), "-", "0")
            continue
        color = "green" if rate >= desired else ("yellow" if rate >= desired - 0.1 else "red")
        table.add_row(
            week_name(progress, week.week),
            Text(bar(rate, 20), style=color),
            f"{rate:.0%}",
            str(week.reviews),
        )
    note = Text(
        "answers to cards in review (learning steps left out) rated Hard, Good or Easy; "
        f"desired retention {desired:.0%}",
        style="dim",
    )
    return [title, table, note]


def spark(shares: Sequence[float]) -> Text:
    """One cell per week: taller for a larger share, '·' for none."""
    out = Text()
    for share in shares:
        if share <= 0:
            out.append("·", style="dim")
        else:
            out.append(EIGHTHS[1 + min(7, round(share * 7))], style="#58a6ff")
    return out


def readiness_table(progress: Progress) -> list[Text | Table]:
    """Each target company's share of ready themes per recent week, then and now."""
    if not progress.readiness:
        return []
    shown = _recent_weeks(progress)
    title = Text.assemble(("Readiness by week", "bold"), f", last {plural(shown, 'week')} to now")
    table = Table(
        "company", "by week", "then", "now", "change", box=None, header_style="bold", pad_edge=False
    )
    table.columns[0].max_width = 24
    table.columns[0].no_wrap = True
    table.columns[0].overflow = "ellipsis"
    for history in progress.readiness:
        shares = history.shares[-shown:]
        change = round((shares[-1] - shares[0]) * 100)
        table.add_row(
            Text(history.name),
            spark(shares),
            f"{shares[0]:.0%}",
            f"{shares[-1]:.0%}",
            Text(f"{change:+d} pts", style="green" if change > 0 else "dim"),
        )
    note = Text(
        "share of asked themes with a review card at >= 90% recall at each week's end",
        style="dim",
    )
    return [title, table, note]
