"""The Textual app: handed its collaborators by the CLI factory, it only shows and routes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.binding import Binding

from quizzer.bank.model import Filters
from quizzer.review.service import ReviewService
from quizzer.review.session import StudySession
from quizzer.review.stats import Overview, overview
from quizzer.tui.screens.browse import BrowseScreen
from quizzer.tui.screens.help import HelpScreen
from quizzer.tui.screens.home import HomeScreen
from quizzer.tui.screens.study import StudyScreen

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
        targets: list[str] | None = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.service = service
        self.filters = filters or Filters()
        self.cram = cram
        self.new_limit = new_limit
        self.start_study = start_study
        self.targets = targets or DEFAULT_TARGETS
        self.timer = timer

    def on_mount(self) -> None:
        # A direct study session paints its first card without computing the home screen.
        if self.start_study:
            self.action_study()
        else:
            self.push_screen(HomeScreen())

    def action_home(self) -> None:
        """Back from a finished session: to the screen below, or home if there is none."""
        if len(self.screen_stack) > 2:
            self.pop_screen()
        else:
            self.switch_screen(HomeScreen())

    def overview(self) -> Overview:
        return overview(self.service, self.targets)

    def _session(self, cram: bool) -> StudySession:
        return StudySession(
            self.service, self.filters, cram=cram, new_limit=self.new_limit, timer=self.timer
        )

    def action_study(self) -> None:
        self.push_screen(StudyScreen(self._session(self.cram)))

    def action_cram(self) -> None:
        self.push_screen(StudyScreen(self._session(True)))

    def action_browse(self) -> None:
        self.push_screen(BrowseScreen())

    def action_help(self) -> None:
        self.push_screen(HelpScreen())
