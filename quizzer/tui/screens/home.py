"""Home: today at a glance, readiness for the target companies, and where to go next.

The tables fit the terminal: numbers are never cut, the name column takes what is left
and ends in an ellipsis when it must; below 110 columns the tables stack.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from quizzer.bank.model import Filters
from quizzer.review.model import percent, plural
from quizzer.review.stats import Breakdown, Overview
from quizzer.tui.reporting import read_then_show
from quizzer.tui.text import fit

NARROW = 110  # below this width the two tables stack
READY_HELP = "ready: share of a company's asked themes whose cards you now recall at >= 90%"


def number_widths(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[int]:
    """The width each number column needs: its header or its widest value."""
    return [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]


def today_line(overview: Overview) -> str:
    """'Due now 3 · New today 20 of 530 · Reviewed today 4 · Streak 2 days'."""
    return (
        f"Due now [b]{overview.due_now}[/b] · "
        f"New today [b]{overview.new_today}[/b] of {overview.new_available} · "
        f"Reviewed today [b]{overview.reviews_today}[/b] · "
        f"Streak [b]{plural(overview.streak, 'day')}[/b]"
    )


class HomeScreen(Screen[None]):
    """Counts per topic and target company; Enter on a row studies it."""

    BINDINGS = [
        Binding("s", "app.study", "Study"),
        Binding("c", "app.cram", "Cram"),
        Binding("r", "app.browse", "Browse"),
        Binding("t", "app.stats", "Stats"),
        Binding("p", "app.plan", "Plan", show=False),
        Binding("o", "app.settings", "Settings"),
        Binding("question_mark", "app.help", "Keys"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, overview: Overview | None = None) -> None:
        super().__init__()
        self.overview = overview  # read before the app started, or by a worker
        self.fresh = overview is not None  # the first resume need not read it again
        self.filled_width = 0  # the width the tables were last filled for

    def compose(self) -> ComposeResult:
        yield Static("quizzer · AI-infra interview prep", id="title")
        shown = today_line(self.overview) if self.overview else "Loading..."
        yield Static(shown, id="today")
        with Horizontal(id="home-tables"):
            with Vertical(id="topics-box"):
                yield Static("By topic  (enter: study it)", classes="section-title")
                yield DataTable(id="topics", cursor_type="row", zebra_stripes=True)
            with Vertical(id="companies-box"):
                yield Static("Target companies  (enter: study it)", classes="section-title")
                yield DataTable(id="companies", cursor_type="row", zebra_stripes=True)
                yield Static(READY_HELP, id="ready-help")
        yield Static(Content(f"Database: {self.database()}"), id="database")
        yield Footer()

    def database(self) -> str:
        from quizzer.db.target import shown_url

        return shown_url(self.app.service.database_url)  # type: ignore[attr-defined]

    def on_screen_resume(self) -> None:
        if self.fresh:
            self.fresh = False
            return
        self.refresh_overview()

    def on_mount(self) -> None:
        # The terminal's width is known before the first layout: fill the tables for it
        # now, so the first frame already holds the numbers.
        self.layout_for(self.app.size.width)

    @on(Resize)
    def _resized(self, event: Resize) -> None:
        if event.size.width != self.filled_width:
            self.layout_for(event.size.width)

    def layout_for(self, width: int) -> None:
        """Stack the tables below NARROW columns and fill them for `width`."""
        self.query_one("#home-tables").set_class(width < NARROW, "narrow")
        self.fill(width)

    @work(thread=True, exclusive=True)
    def refresh_overview(self) -> None:
        read_then_show(self, "read progress", self.app.overview, self.show)  # type: ignore[attr-defined]

    def show(self, overview: Overview) -> None:
        self.overview = overview
        self.query_one("#today", Static).update(today_line(overview))
        self.fill()

    def fill(self, width: int | None = None) -> None:
        """Size the company column for its names and fill both tables for the width
        they get, worked out from the screen's (or `width`), so the numbers come in this
        frame."""
        overview = self.overview
        width = width or self.size.width
        if overview is None or not width:
            return
        self.filled_width = width
        box = self.query_one("#companies-box")
        if width < NARROW:
            box.styles.width = None
            topics_width = companies_width = width
        else:
            companies_width = self.companies_width(overview) + 2  # and the scrollbar
            box.styles.width = companies_width + 1  # and its left padding
            topics_width = width - companies_width - 1
        ready = {r.company: percent(r.share) for r in overview.readiness}
        self._fill(
            self.query_one("#topics", DataTable),
            topics_width,
            ("topic", "due", "new", "total"),
            [(row, (str(row.due), str(row.new), str(row.total))) for row in overview.by_topic],
        )
        self._fill(
            self.query_one("#companies", DataTable),
            companies_width,
            ("company", "due", "new", "total", "ready"),
            [
                (row, (str(row.due), str(row.new), str(row.total), ready.get(row.key, "0%")))
                for row in overview.by_company
            ],
        )

    @staticmethod
    def companies_width(overview: Overview) -> int:
        """The width the company table needs to show every name whole."""
        header = ("company", "due", "new", "total", "ready")
        values = [(str(r.due), str(r.new), str(r.total), "100%") for r in overview.by_company]
        longest = max([len(header[0]), *(len(r.name) for r in overview.by_company)])
        return longest + sum(number_widths(header[1:], values)) + 2 * len(header) + 2

    @staticmethod
    def _fill(
        table: DataTable[object],
        width: int,
        header: tuple[str, ...],
        rows: list[tuple[Breakdown, tuple[str, ...]]],
    ) -> None:
        widths = number_widths(header[1:], [values for _, values in rows])
        padding = 2 * table.cell_padding
        # What the numbers leave for the name: every column's padding, and the scrollbar.
        spare = width - sum(widths) - padding * len(header) - 2
        longest = max([len(header[0]), *(len(row.name) for row, _ in rows)])
        name_width = max(8, min(longest, spare))
        # As wide as its columns: rows end where their numbers do, not at the far edge.
        table.styles.width = min(width, name_width + sum(widths) + padding * len(header) + 2)
        cursor = table.cursor_row
        table.clear(columns=True)
        table.add_column(header[0], width=name_width, key="name")
        for label, width in zip(header[1:], widths, strict=True):
            table.add_column(Text(label, justify="right"), width=width, key=label)
        for row, values in rows:
            cells = [Text(v, justify="right") for v in values]
            table.add_row(Text(fit(row.name, name_width)), *cells, key=row.key)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1), animate=False)

    @on(DataTable.RowSelected)
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is None:
            return
        if event.data_table.id == "topics":
            filters = Filters(topics=(key,))
        else:
            filters = Filters(companies=(key,))
        self.app.study_on(filters)  # type: ignore[attr-defined]
