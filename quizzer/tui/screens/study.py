"""The study screen: question, reveal, Markdown answer, rating bar with intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizzer.bank.model import Bank, Question
from quizzer.errors import CorruptCardError
from quizzer.review.model import Rating
from quizzer.review.session import StudySession
from quizzer.tui.reporting import reporting
from quizzer.tui.widgets.rating_bar import RatingBar

if TYPE_CHECKING:
    from textual.widgets import Markdown

# The dialogs, the summary screen and the Markdown widget are imported when first needed,
# so the first question paints without them.


def asked_line(bank: Bank, q: Question) -> str:
    """Who asks it; the count is of write-ups that asked one of the card's themes."""
    if not q.asked_by:
        return "not in the interview data"
    n = q.times_asked
    return (
        f"its themes came up in {n} write-up{'s' if n != 1 else ''}: {bank.asked_summary(q, top=4)}"
    )


def progress_line(session: StudySession, state: str) -> str:
    """'New 12 · Learning 2 · Review 30 · review card', or the cram count."""
    left = session.remaining
    if session.cram:
        return f"Cram  ·  {left.new + left.review} left  ·  schedule untouched"
    return f"New {left.new}  ·  Learning {left.learning}  ·  Review {left.review}  ·  {state} card"


def key_points_markdown(q: Question) -> str:
    return "**Key points**\n\n" + "  \n".join(f"☐ {point}" for point in q.key_points)


class StudyScreen(Screen[None]):
    BINDINGS = [
        Binding("space,enter", "reveal", "Reveal"),
        Binding("1", "rate(1)", "Again", show=False),
        Binding("2", "rate(2)", "Hard", show=False),
        Binding("3", "rate(3)", "Good", show=False),
        Binding("4", "rate(4)", "Easy", show=False),
        Binding("u", "undo", "Undo"),
        Binding("s", "suspend", "Suspend"),
        Binding("b", "bury", "Bury"),
        Binding("e", "exercise", "Exercise"),
        Binding("question_mark", "help", "Keys"),
        Binding("escape,q", "finish", "End"),
    ]

    def __init__(self, session: StudySession, *, loaded: bool = False) -> None:
        super().__init__()
        self.session = session
        self.loaded = loaded  # the queue is already loaded (`QuizzerApp.preload_study`)
        self.revealed = False
        self.answer_parts: tuple[Markdown, Markdown] | None = None  # mounted at first reveal

    def compose(self) -> ComposeResult:
        yield Static("", id="progress")
        yield Static("", id="meta")
        with VerticalScroll(id="card"):
            yield Static("Loading...", id="question")
        yield RatingBar(id="rating-bar")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#rating-bar").display = False
        if self.loaded:
            self.show_current()
        else:
            self.load_queue()
        # Only once this frame is on screen, so the first card does not wait for it.
        self.call_after_refresh(self.app.open_database)  # type: ignore[attr-defined]

    @work(thread=True, exclusive=True)
    def load_queue(self) -> None:
        try:
            self.session.load()
        except Exception as exc:  # shown in the app, never a traceback
            self.app.call_from_thread(
                self.app.notify, f"Could not load cards: {exc}", severity="error", markup=False
            )
            self.app.call_from_thread(self.dismiss)
            return
        self.app.call_from_thread(self.show_current)

    def reload(self) -> None:
        """Build the queue again (the settings changed) unless this sitting has begun."""
        if self.session.done or self.revealed:
            return
        with reporting(self, "load cards"):
            self.session.load()
            self.show_current()

    # -- rendering -----------------------------------------------------------------------

    def show_current(self) -> None:
        qid = self.session.current
        if qid is None:
            self.finish()
            return
        bank = self.session.service.bank
        question = bank.questions[qid]
        try:
            card = self.session.service.card(qid)
        except CorruptCardError as exc:  # a damaged row: say which card, go on to the next
            self.notify(str(exc), severity="warning", timeout=10, markup=False)
            self.session.skip()
            self.show_current()
            return
        self.revealed = False
        self.query_one("#progress", Static).update(progress_line(self.session, card.state))
        topic = (
            bank.topics[question.topic].name if question.topic in bank.topics else question.topic
        )
        self.query_one("#meta", Static).update(
            Content.from_markup(  # bank text goes in as $variables: shown literally
                "[b]$topic[/b]  ·  $difficulty  ·  $asked",
                topic=topic,
                difficulty=question.difficulty,
                asked=asked_line(bank, question),
            )
        )
        self.query_one("#question", Static).update(Content(question.question))
        for part in self.answer_parts or ():
            part.update("")
            part.display = False
        self.query_one("#rating-bar").display = False
        self.query_one("#card", VerticalScroll).scroll_home(animate=False)
        self.session.mark_shown()

    def action_reveal(self) -> None:
        qid = self.session.current
        if qid is None or self.revealed:
            return
        question = self.session.service.bank.questions[qid]
        with reporting(self, "read the card's schedule"):
            intervals = None if self.session.cram else self.session.service.preview(qid)
            self.revealed = True
            self.show_answer(question.answer, key_points_markdown(question))
            bar = self.query_one(RatingBar)
            bar.show_intervals(intervals)
            bar.display = True

    def show_answer(self, answer: str, points: str) -> None:
        if self.answer_parts is None:
            from textual.widgets import Markdown

            self.answer_parts = (Markdown(answer, id="answer"), Markdown(points, id="key-points"))
            self.query_one("#card", VerticalScroll).mount_all(self.answer_parts)
            return
        for part, text in zip(self.answer_parts, (answer, points), strict=True):
            part.update(text)
            part.display = True

    # -- actions -------------------------------------------------------------------------

    def action_rate(self, value: int) -> None:
        if not self.revealed or self.session.current is None:
            return
        with reporting(self, "save the rating"):
            outcome = self.session.rate(Rating(value))
            if outcome.became_leech:
                lapses = self.session.service.settings.leech_threshold
                self.notify(
                    f"{outcome.question_id} is now a leech ({lapses} lapses)",
                    severity="warning",
                    markup=False,
                )
            self.show_current()

    @on(RatingBar.Rated)
    def _rated(self, event: RatingBar.Rated) -> None:
        self.action_rate(int(event.rating))

    def action_undo(self) -> None:
        with reporting(self, "undo"):
            result = self.session.undo()
            if result is None:
                self.notify("Nothing to undo")
                return
            if not result.undone:
                self.notify(
                    f"Not undone: {result.question_id} changed elsewhere since",
                    severity="warning",
                    markup=False,
                )
                return
            what = "rating" if result.kind == "rate" else result.kind
            self.notify(f"Undid the {what} of {result.question_id}", markup=False)
            self.show_current()

    def action_suspend(self) -> None:
        qid = self.session.current
        if qid is None:
            return
        with reporting(self, "suspend"):
            self.session.suspend()
            self.notify(f"Suspended {qid}", markup=False)
            self.show_current()

    def action_bury(self) -> None:
        qid = self.session.current
        if qid is None:
            return
        with reporting(self, "bury"):
            self.session.bury()
            self.notify(f"Buried {qid} until tomorrow", markup=False)
            self.show_current()

    def action_exercise(self) -> None:
        qid = self.session.current
        exercise = self.session.service.bank.questions[qid].exercise if qid else None
        if exercise is None:
            self.notify("This card has no linked exercise")
            return
        from quizzer.tui.screens.exercise_info import ExerciseScreen

        self.app.push_screen(ExerciseScreen(exercise))

    def action_help(self) -> None:
        from quizzer.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_finish(self) -> None:
        self.finish()

    def finish(self) -> None:
        from quizzer.tui.screens.summary import SummaryScreen

        summary = self.session.summary()
        now = self.session.service.clock()
        self.app.switch_screen(SummaryScreen(summary, now, self.session))
