"""The study screen: question, reveal, Markdown answer, rating bar with intervals."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizzer.bank.code_blocks import plain_fences
from quizzer.bank.model import Bank, Question
from quizzer.errors import CorruptCardError
from quizzer.review.model import Rating, format_interval
from quizzer.review.session import StudySession
from quizzer.tui.reporting import reporting
from quizzer.tui.widgets.key_points import KeyPoints
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


def more_markdown(q: Question) -> str:
    """Follow-ups and references, shown under the key points after the reveal."""
    parts: list[str] = []
    if q.follow_ups:
        parts.append("**Follow-ups**\n\n" + "\n".join(f"- {f}" for f in q.follow_ups))
    if q.references:
        refs = "\n".join(f"- [{r.title}]({r.url})" for r in q.references)
        parts.append("**References**\n\n" + refs)
    return "\n\n".join(parts)


def ticked_line(ticked: int, total: int, asking: bool) -> str:
    """What the line over the rating bar says about the key points."""
    if asking:
        return f"Tick which key point? 1-{total}  (escape: none)"
    if not total:
        return ""
    return f"Key points ticked: {ticked} of {total}  (t, then its number; or click)"


class StudyScreen(Screen[None]):
    BINDINGS = [
        Binding("space,enter", "reveal", "Reveal"),
        *(
            Binding(str(int(r)), f"rate({int(r)})", r.label, key_display=str(int(r)))
            for r in Rating
        ),
        Binding("t", "tick", "Tick"),
        Binding("s", "suspend", "Suspend"),
        Binding("b", "bury", "Bury"),
        # The same keys after the reveal, working but not in the footer (room for 1-4).
        Binding("s", "suspend_quietly", "Suspend", show=False),
        Binding("b", "bury_quietly", "Bury", show=False),
        Binding("e", "exercise", "Exercise"),
        Binding("u", "undo", "Undo"),
        Binding("question_mark", "help", "Keys"),
        Binding("q", "finish", "End"),
        Binding("escape", "escape", "End", show=False),
    ]

    def __init__(self, session: StudySession, *, loaded: bool = False) -> None:
        super().__init__()
        self.session = session
        self.loaded = loaded  # the queue is already loaded (`QuizzerApp.preload_study`)
        self.revealed = False
        self.asking_point = False  # `t` was pressed: the next number ticks a key point
        self.answer_parts: tuple[Markdown, KeyPoints, Markdown] | None = None  # at reveal

    def compose(self) -> ComposeResult:
        yield Static("", id="progress")
        yield Static("", id="meta")
        with VerticalScroll(id="card"):
            yield Static("Loading...", id="question")
        yield Static("", id="ticked")
        yield RatingBar(id="rating-bar")
        # Compact and without the palette hint (ctrl+p still works): every key fits in 80.
        yield Footer(compact=True, show_command_palette=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The footer follows the card: reveal first, then the ratings."""
        if action == "reveal":
            return not self.revealed
        if action in ("rate", "suspend_quietly", "bury_quietly"):
            return self.revealed
        if action in ("suspend", "bury"):
            return not self.revealed
        if action == "tick":
            return self.revealed and bool(self.answer_parts and self.answer_parts[1].points)
        if action == "exercise":
            qid = self.session.current
            return bool(qid and self.session.service.bank.questions[qid].exercise)
        return True

    def on_mount(self) -> None:
        self.query_one("#rating-bar").display = False
        self.query_one("#ticked").display = False
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
        self.remove_answer()
        self.asking_point = False
        self.query_one("#rating-bar").display = False
        self.query_one("#ticked").display = False
        self.refresh_bindings()
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
            self.show_answer(question)
            bar = self.query_one(RatingBar)
            bar.show_intervals(intervals)
            bar.display = True
            self.label_ratings(intervals)
            self.show_ticked()
            self.refresh_bindings()

    def label_ratings(self, intervals: dict[Rating, timedelta] | None) -> None:
        """The footer's 1-4 say what each rating gives, as the buttons do: 'Good 10m'."""
        for rating in Rating:
            key = str(int(rating))
            delta = intervals.get(rating) if intervals else None
            label = f"{rating.label} {format_interval(delta)}" if delta else rating.label
            self._bindings.key_to_bindings[key] = [Binding(key, f"rate({key})", label)]

    def show_answer(self, question: Question) -> None:
        from textual.widgets import Markdown

        self.answer_parts = (
            Markdown(plain_fences(question.answer), classes="answer"),
            KeyPoints(question.key_points, classes="key-points"),
            Markdown(more_markdown(question), classes="more"),
        )
        self.query_one("#card", VerticalScroll).mount_all(self.answer_parts)

    def remove_answer(self) -> None:
        if self.answer_parts is not None:
            for part in self.answer_parts:
                part.remove()
            self.answer_parts = None

    def show_ticked(self) -> None:
        line = self.query_one("#ticked", Static)
        points = self.answer_parts[1] if self.answer_parts else None
        total = len(points.points) if points else 0
        line.update(ticked_line(points.ticked if points else 0, total, self.asking_point))
        line.display = self.revealed and total > 0

    @on(KeyPoints.Changed)
    def _points_changed(self) -> None:
        self.show_ticked()

    def action_tick(self) -> None:
        """The next number key ticks that key point instead of rating."""
        if self.revealed and self.answer_parts:
            self.asking_point = True
            self.show_ticked()

    # -- actions -------------------------------------------------------------------------

    def action_rate(self, value: int) -> None:
        if self.asking_point:
            self.asking_point = False
            if self.answer_parts:
                self.answer_parts[1].toggle(value)
            self.show_ticked()
            return
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

    def action_suspend_quietly(self) -> None:
        self.action_suspend()

    def action_bury_quietly(self) -> None:
        self.action_bury()

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

    def action_escape(self) -> None:
        """Escape never ends a sitting by accident: it closes what is open, or asks."""
        if self.asking_point:
            self.asking_point = False
            self.show_ticked()
            return
        if self.app._notifications:  # a message is showing: escape only closes it
            self.app.clear_notifications()
            return
        from quizzer.tui.screens.confirm import ConfirmScreen

        def answered(end: bool | None) -> None:
            if end:
                self.finish()

        self.app.push_screen(
            ConfirmScreen("End this session? Everything rated so far is saved."), answered
        )

    def finish(self) -> None:
        from quizzer.tui.screens.summary import SummaryScreen

        summary = self.session.summary()
        now = self.session.service.clock()
        self.app.switch_screen(SummaryScreen(summary, now, self.session))
