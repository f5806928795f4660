"""Browse: search as you type, filter, read a card with its history, change its state.

Typing is debounced; the search runs in a worker and a result that a newer keystroke has
overtaken is dropped, so the preview always shows the highlighted row (or "no match").
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Markdown, Static

from quizzer.review.browse import CardQuery, describe_card, search_cards, state_label
from quizzer.review.model import CardInfo, plural
from quizzer.tui.reporting import read_then_show, reporting
from quizzer.tui.text import fit

DEBOUNCE_S = 0.15
SHOWN = 500  # rows in the table at most; the count says how many matched
STACKED = 120  # below this width the preview goes under the table
NO_MATCH = "**No match.** Try fewer words, or a filter such as `topic:kv` or `state:review`."
# Optional columns, dropped right to left when the question would get too narrow.
OPTIONAL = (("state", 10), ("due", 10), ("topic", 5), ("lapses", 6))
MIN_QUESTION = 24


def columns_for(width: int, id_width: int) -> tuple[list[tuple[str, int]], int]:
    """The optional columns that fit beside id and question, and the question's width."""
    chosen = list(OPTIONAL)
    while True:
        used = id_width + sum(w for _, w in chosen) + 2 * (len(chosen) + 2) + 2
        question = width - used
        if question >= MIN_QUESTION or not chosen:
            return chosen, max(10, question)
        chosen.pop()


class BrowseScreen(Screen[None]):
    """Every card, searchable; the preview follows the highlighted row."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+s", "toggle_suspend", "Suspend/unsuspend", priority=True),
        Binding("ctrl+x", "reset", "Reset", priority=True),
        Binding("ctrl+z", "undo", "Undo", priority=True),
        # From the search box, the arrows move through the results.
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, CardInfo] = {}
        self.shown: list[CardInfo] = []
        self.generation = 0  # bumped by every search asked for; older results are dropped
        self.pending: Timer | None = None
        self.preview_id: str | None = None  # the card the preview shows, None for none

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="search… e.g. paged topic:kv company:bytedance state:review", id="search"
        )
        yield Static("", id="query-error")
        with Horizontal(id="browse-body"):
            yield DataTable(id="results", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail"):
                yield Markdown("", id="detail-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#query-error").display = False
        self.load()

    @work(thread=True, exclusive=True, group="load")
    def load(self) -> None:
        read_then_show(self, "load cards", self.app.service.cards, self._loaded)  # type: ignore[attr-defined]

    def _loaded(self, cards: dict[str, CardInfo]) -> None:
        self.cards = cards
        self.search_now()

    @on(Resize)
    def _resized(self, event: Resize) -> None:
        self.query_one("#browse-body").set_class(event.size.width < STACKED, "stacked")
        self.fill()

    def table_width(self) -> int:
        """The results table's width, set here from the screen's, so a fill never waits
        for a layout: all of it when stacked, else three fifths."""
        width = self.size.width
        table = self.query_one("#results", DataTable)
        if width >= STACKED:
            width = width * 3 // 5
        table.styles.width = width
        return width

    # -- searching -------------------------------------------------------------------------

    @on(Input.Changed, "#search")
    def _typed(self) -> None:
        self.generation += 1
        if self.pending is not None:
            self.pending.stop()
        self.pending = self.set_timer(DEBOUNCE_S, self.search_now)

    def search_now(self) -> None:
        """Search for what the box says now, in a worker."""
        self.pending = None
        self.generation += 1
        self.run_search(self.query_one("#search", Input).value, self.generation)

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, text: str, generation: int) -> None:
        query = CardQuery.parse(text)
        service = self.app.service  # type: ignore[attr-defined]
        found = search_cards(list(self.cards.values()), query, service.clock(), service.bank)
        self.app.call_from_thread(self.show_results, query, found, generation)

    def show_results(self, query: CardQuery, found: list[CardInfo], generation: int) -> None:
        if generation != self.generation:
            return  # a newer search is on its way
        error = self.query_one("#query-error", Static)
        error.update(Content(query.error or ""))
        error.display = query.error is not None
        self.shown = found
        self.sub_title = plural(len(found), "card")
        self.fill()

    def fill(self) -> None:
        """The table for the width it has, the cursor kept on its card where it can be."""
        table = self.query_one("#results", DataTable)
        keep = self.current_id()
        now = self.app.service.clock()  # type: ignore[attr-defined]
        rows = self.shown[:SHOWN]
        width = self.table_width()
        cap = 28 if width >= 100 else 22
        id_width = min(cap, max([2, *(len(c.question.id) for c in rows)]))
        optional, question_width = columns_for(width, id_width)
        table.clear(columns=True)
        table.add_column("id", width=id_width, key="id")
        table.add_column("question", width=question_width, key="question")
        for name, width in optional:
            table.add_column(name, width=width, key=name)
        for card in rows:
            cells = {
                "state": state_label(card, now),
                "due": card.due.strftime("%Y-%m-%d") if card.due else "-",
                "topic": card.question.topic,
                "lapses": str(card.lapses),
            }
            table.add_row(
                Text(fit(card.question.id, id_width)),
                Text(fit(" ".join(card.question.question.split()), question_width)),
                *(Text(cells[name]) for name, _ in optional),
                key=card.question.id,
            )
        ids = [c.question.id for c in rows]
        if keep in ids:
            table.move_cursor(row=ids.index(keep), animate=False)
        self.show_detail(self.current_id())

    @on(DataTable.RowHighlighted, "#results")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.row_key.value)

    def action_move(self, step: int) -> None:
        table = self.query_one("#results", DataTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def current_id(self) -> str | None:
        table = self.query_one("#results", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def show_detail(self, qid: str | None) -> None:
        detail = self.query_one("#detail-text", Markdown)
        if qid is None:
            self.preview_id = None
            detail.update(NO_MATCH if self.cards else "")
            return
        service = self.app.service  # type: ignore[attr-defined]
        with reporting(self, "read the card"):
            card = service.card(qid)
            now: datetime = service.clock()
            detail.update(describe_card(service.bank, card, service.history(qid), now))
            self.preview_id = qid

    # -- changing a card ---------------------------------------------------------------------

    def _changed(self, qid: str, message: str) -> None:
        self.cards[qid] = self.app.service.card(qid)  # type: ignore[attr-defined]
        self.notify(message, markup=False)
        self.search_now()

    def action_toggle_suspend(self) -> None:
        qid = self.current_id()
        if qid is None:
            return
        suspended = not self.cards[qid].suspended
        with reporting(self, "suspend" if suspended else "unsuspend"):
            self.app.service.suspend(qid, suspended)  # type: ignore[attr-defined]
            self._changed(qid, f"{'Suspended' if suspended else 'Unsuspended'} {qid}")

    def action_reset(self) -> None:
        """Ask first; a confirmed reset can still be undone with ctrl+z."""
        qid = self.current_id()
        if qid is None:
            return
        from quizzer.tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            with reporting(self, "reset"):
                self.app.service.reset(qid)  # type: ignore[attr-defined]
                self._changed(qid, f"Reset {qid}: it is new again (history kept; ctrl+z undoes)")

        question = f"Reset {qid}? Its schedule is forgotten; its review history is kept."
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_undo(self) -> None:
        """Take back the last rating, suspend, bury or reset made in this app."""
        service = self.app.service  # type: ignore[attr-defined]
        with reporting(self, "undo"):
            result = service.undo()
            if result is None:
                self.notify("Nothing to undo")
                return
            if not result.undone:
                self.notify(f"Not undone: {result.question_id} changed elsewhere since")
                return
            what = "rating" if result.kind == "rate" else result.kind
            if result.question_id in self.cards:
                self._changed(result.question_id, f"Undid the {what} of {result.question_id}")
