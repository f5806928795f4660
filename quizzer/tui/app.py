"""The Textual app: handed its collaborators by the CLI factory, it only shows and routes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding

from quizzer.bank.model import Filters

if TYPE_CHECKING:
    from textual.screen import Screen

    from quizzer.review.service import ReviewService
    from quizzer.review.session import StudySession
    from quizzer.review.stats import Overview

# The screens, the study session and the stats module are imported when first needed, so
# that `quizzer study` paints its first card without loading home, and home without study.

DEFAULT_TARGETS = ["bytedance", "alibaba", "baidu", "tencent", "nvidia"]


class QuizzerApp(App[None]):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "quizzer"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False)]

    def __init__(
        self,
        service: ReviewService,
        *,
        filters: Filters | None = None,
        cram: bool = False,
        new_limit: int | None = None,
        start_study: bool = False,
        first_run: bool = False,
        targets: list[str] | None = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.service = service
        self.filters = filters or Filters()
        self.cram = cram
        self.new_limit = new_limit
        self.start_study = start_study
        self.first_run = first_run
        self._targets = targets
        self.timer = timer
        self.preloaded: StudySession | None = None
        self.preloaded_overview: Overview | None = None

    def preload_study(self) -> None:
        """Load the first study queue now, before `run`: the first card is on the first frame.

        The CLI calls this for `quizzer study`, so a database error is its usual one line.
        """
        self.preloaded = self._session(self.cram)
        self.preloaded.load()

    def preload_home(self) -> None:
        """Read home's figures now, before `run`: its first frame has the numbers."""
        self.preloaded_overview = self.overview()

    def on_mount(self) -> None:
        # A direct study session paints its first card without computing the home screen.
        if self.start_study:
            self.action_study()
        else:
            from quizzer.tui.screens.home import HomeScreen

            overview, self.preloaded_overview = self.preloaded_overview, None
            self.push_screen(HomeScreen(overview))
        if self.first_run:
            self.action_settings(first_run=True)

    @property
    def targets(self) -> list[str]:
        """The companies home shows: as given, else the chosen ones, else the most asked."""
        return self._targets or list(self.service.settings.companies) or DEFAULT_TARGETS

    @work(thread=True, exclusive=True, group="open")
    def open_database(self) -> None:
        """Load SQLAlchemy and open the database while the first card is being read.

        The study screen calls this once its first frame is up; it does nothing when the
        service opened its database before the app started.
        """
        if self.service.quick is None:
            return
        try:
            self.service.open()
        except Exception as exc:  # the app stays up; the failure is a message
            from quizzer.db.errors import describe_db_error

            reason = describe_db_error(exc) or str(exc)
            self.call_from_thread(
                self.notify,
                f"Could not open the database: {reason}",
                severity="error",
                markup=False,
            )

    def action_home(self) -> None:
        """Back from a finished session: to the screen below, or home if there is none."""
        if len(self.screen_stack) > 2:
            self.pop_screen()
        else:
            from quizzer.tui.screens.home import HomeScreen

            self.switch_screen(HomeScreen())

    def overview(self) -> Overview:
        from quizzer.review.stats import overview

        return overview(self.service, self.targets)

    def _session(self, cram: bool) -> StudySession:
        from quizzer.review.session import StudySession

        return StudySession(
            self.service, self.filters, cram=cram, new_limit=self.new_limit, timer=self.timer
        )

    def action_study(self) -> None:
        from quizzer.tui.screens.study import StudyScreen

        session, self.preloaded = self.preloaded, None
        if session is not None:
            self.push_screen(StudyScreen(session, loaded=True))
        else:
            self.push_screen(StudyScreen(self._session(self.cram)))

    def study_on(self, filters: Filters) -> None:
        """A sitting on one topic or company (Enter on a home row)."""
        from quizzer.review.session import StudySession
        from quizzer.tui.screens.study import StudyScreen

        session = StudySession(
            self.service, filters, cram=self.cram, new_limit=self.new_limit, timer=self.timer
        )
        self.push_screen(StudyScreen(session))

    def action_cram(self) -> None:
        from quizzer.tui.screens.study import StudyScreen

        self.push_screen(StudyScreen(self._session(True)))

    def action_browse(self) -> None:
        from quizzer.tui.screens.browse import BrowseScreen

        self.push_screen(BrowseScreen())

    def action_settings(self, first_run: bool = False) -> None:
        """The settings screen; a first-run setup over a study screen reorders its queue."""
        from quizzer.tui.screens.settings import SettingsScreen
        from quizzer.tui.screens.study import StudyScreen

        def saved(changed: bool | None) -> None:
            screen = self.screen
            if changed and isinstance(screen, StudyScreen):
                screen.reload()

        self.push_screen(SettingsScreen(first_run=first_run), saved)

    def action_stats(self) -> None:
        from quizzer.tui.screens.stats import StatsScreen

        self.push_screen(StatsScreen())

    def action_plan(self) -> None:
        from quizzer.tui.screens.plan import PlanScreen

        self.push_screen(PlanScreen())

    def action_exercises(self) -> None:
        from quizzer.tui.screens.exercise_list import ExerciseListScreen

        self.push_screen(ExerciseListScreen())

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The app's own commands first, then Textual's (theme, keys, quit...)."""
        yield SystemCommand("Study", "Due cards, then new ones", self.action_study)
        yield SystemCommand("Cram", "Review without changing the schedule", self.action_cram)
        yield SystemCommand("Browse", "Search every card", self.action_browse)
        yield SystemCommand("Stats", "Recall, forecast and readiness", self.action_stats)
        yield SystemCommand("Settings", "Limits, steps, companies, focus", self.action_settings)
        yield SystemCommand("Plan", "The study plan to your interview date", self.action_plan)
        yield SystemCommand("Exercises", "The graded coding exercises", self.action_exercises)
        yield SystemCommand("Keys", "Every key of every screen", self.action_help)
        yield from super().get_system_commands(screen)

    def action_help(self) -> None:
        from quizzer.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())
