"""Browse: search as you type, filter, read a card with its history, change its state."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Markdown

from quizzer.review.browse import CardQuery, describe_card, search_cards
from quizzer.review.model import CardInfo
from quizzer.tui.reporting import reporting


class BrowseScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+s", "toggle_suspend", "Suspend/unsuspend", priority=True),
        Binding("ctrl+x", "reset", "Reset", priority=True),
        Binding("ctrl+z", "undo", "Undo", priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, CardInfo] = {}
        self.shown: list[CardInfo] = []

    def compose(self) -> ComposeResult:
        yield Input(
            placeholder="search… e.g. paged topic:kv company:bytedance state:review", id="search"
        )
        with Horizontal(id="browse-body"):
            yield DataTable(id="results", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="detail"):
                yield Markdown("", id="detail-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#results", DataTable).add_columns("id", "state", "due")
        self.load()

    @work(thread=True, exclusive=True)
    def load(self) -> None:
        try:
            cards = self.app.service.cards()  # type: ignore[attr-defined]
        except Exception as exc:
            self.app.call_from_thread(
                self.app.notify, f"Could not load cards: {exc}", severity="error", markup=False
            )
            return
        self.app.call_from_thread(self._loaded, cards)

    def _loaded(self, cards: dict[str, CardInfo]) -> None:
        self.cards = cards
        self.apply(self.query_one("#search", Input).value)

    @on(Input.Changed, "#search")
    def _search(self, event: Input.Changed) -> None:
        self.apply(event.value)

    def apply(self, text: str) -> None:
        query = CardQuery.parse(text)
        if query.error:
            self.notify(query.error, severity="warning", markup=False)
        service = self.app.service  # type: ignore[attr-defined]
        self.shown = search_cards(self.cards.values(), query, service.clock(), service.bank)
        table = self.query_one("#results", DataTable)
        table.clear()
        for card in self.shown[:500]:
            due = card.due.strftime("%Y-%m-%d") if card.due else "-"
            state = "suspended" if card.suspended else ("leech" if card.leech else card.state)
            table.add_row(card.question.id, state, due, key=card.question.id)
        self.sub_title = f"{len(self.shown)} card(s)"
        if self.shown:
            self.show_detail(self.shown[0].question.id)

    @on(DataTable.RowHighlighted, "#results")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value:
            self.show_detail(event.row_key.value)

    def current_id(self) -> str | None:
        table = self.query_one("#results", DataTable)
        if not self.shown or table.cursor_row < 0:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def show_detail(self, qid: str) -> None:
        service = self.app.service  # type: ignore[attr-defined]
        with reporting(self, "read the card"):
            card = service.card(qid)
            text = describe_card(service.bank, card, service.history(qid))
            self.query_one("#detail-text", Markdown).update(text)

    def _changed(self, qid: str, message: str) -> None:
        self.cards[qid] = self.app.service.card(qid)  # type: ignore[attr-defined]
        self.notify(message, markup=False)
        self.apply(self.query_one("#search", Input).value)

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
