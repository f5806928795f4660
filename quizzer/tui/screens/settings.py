"""Settings: what the learner prepares for, the daily limits and the scheduler's steps.

The same screen is the first-run setup (only the three questions that decide what comes
first) and, from home, every study setting. Values are checked by the review core's
parsers; a bad one is shown under its field and nothing is saved until all are good.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import (
    Button,
    Footer,
    Input,
    RadioButton,
    RadioSet,
    SelectionList,
    Static,
)

from quizzer.bank.model import Bank
from quizzer.review.model import plural
from quizzer.review.settings import AIMS, LEVELS, SPECS, StudySettings, parse_changes
from quizzer.tui.reporting import reporting

ANY_LEVEL = "any level"
SCHEDULE = [name for name in SPECS if name not in AIMS]


def company_choices(bank: Bank) -> list[tuple[str, str]]:
    """(label, id) for every company, most write-ups first."""
    real = (c for c in bank.companies.values() if c.tier != "mixed")  # not one company
    ranked = sorted(real, key=lambda c: (-c.interviews, c.name.lower()))
    return [(f"{c.name} · {plural(c.interviews, 'write-up')}", c.id) for c in ranked]


def topic_choices(bank: Bank) -> list[tuple[str, str]]:
    """(label, id) for every topic, the core ones first, then by name."""
    ranked = sorted(bank.topics.values(), key=lambda t: (t.track != "core", t.name.lower()))
    return [(t.name, t.id) for t in ranked]


class SettingsScreen(Screen[bool]):
    """Dismissed with True when something was saved."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("escape", "skip", "Skip"),
    ]

    def __init__(self, *, first_run: bool = False) -> None:
        super().__init__()
        self.first_run = first_run

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # escape skips the first-run setup and cancels the settings screen.
        if action in ("cancel", "skip"):
            return (action == "skip") == self.first_run
        return True

    @property
    def current(self) -> StudySettings:
        return self.app.service.settings  # type: ignore[attr-defined,no-any-return]

    def compose(self) -> ComposeResult:
        bank: Bank = self.app.service.bank  # type: ignore[attr-defined]
        settings = self.current
        if self.first_run:
            yield Static("Welcome: what are you preparing for?", id="settings-title")
            yield Static(
                "Your answers decide which new cards come first. All of them are optional; "
                "change them later with o on the home screen or quizzer setup.",
                classes="hint",
            )
        else:
            yield Static("Settings", id="settings-title")
            yield Static(
                "Kept in the database, so they follow it to another machine.", classes="hint"
            )
        with VerticalScroll(id="settings-form"):
            yield Static(
                "Target companies  (their write-ups rank new cards; none chosen: all of them)",
                classes="field-title",
            )
            yield SelectionList[str](
                *((label, cid, cid in settings.companies) for label, cid in company_choices(bank)),
                id="companies",
            )
            yield Static("Level", classes="field-title")
            with RadioSet(id="level"):
                for level in (ANY_LEVEL, *LEVELS):
                    chosen = (settings.level or ANY_LEVEL) == level
                    yield RadioButton(level.replace("-", " "), value=chosen, name=level)
            yield Static("Focus topics  (their new cards come first)", classes="field-title")
            yield SelectionList[str](
                *((label, tid, tid in settings.focus) for label, tid in topic_choices(bank)),
                id="focus",
            )
            if not self.first_run:
                yield Static("Schedule", classes="field-title")
                for name in SCHEDULE:
                    chosen_spec = SPECS[name]
                    with Horizontal(classes="setting-row"):
                        yield Static(name, classes="setting-name")
                        yield Input(
                            chosen_spec.show(getattr(settings, chosen_spec.field)),
                            id=f"set-{name}",
                            classes="setting-value",
                        )
                        yield Static(chosen_spec.help, classes="setting-help")
                    yield Static("", id=f"error-{name}", classes="setting-error")
        with Horizontal(id="settings-buttons"):
            yield Button("Save", id="save", variant="primary")
            yield Button("Skip" if self.first_run else "Cancel", id="cancel")
        yield Footer()

    def on_mount(self) -> None:
        for error in self.query(".setting-error"):
            error.display = False

    # -- reading the form --------------------------------------------------------------------

    def texts(self) -> dict[str, str]:
        """Every field as the text form the settings parsers take."""
        companies = self.query_one("#companies", SelectionList).selected
        focus = self.query_one("#focus", SelectionList).selected
        pressed = self.query_one("#level", RadioSet).pressed_button
        level = pressed.name if pressed is not None and pressed.name != ANY_LEVEL else "none"
        texts = {
            "companies": ", ".join(companies) or "none",
            "level": level or "none",
            "focus": ", ".join(focus) or "none",
        }
        for name in SCHEDULE:
            for field in self.query(f"#set-{name}").results(Input):
                texts[name] = field.value
        return texts

    def show_errors(self, errors: dict[str, str]) -> None:
        for name in SCHEDULE:
            for line in self.query(f"#error-{name}").results(Static):
                line.update(Content(errors.get(name, "")))
                line.display = name in errors

    # -- actions -------------------------------------------------------------------------

    @on(Button.Pressed, "#save")
    @on(Input.Submitted)
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def action_save(self) -> None:
        """Check every field; save the changed ones only when all are good."""
        changes, errors = parse_changes(self.current, self.texts())
        self.show_errors(errors)
        if errors:
            self.notify(f"Not saved: {plural(len(errors), 'setting')} to fix", severity="error")
            return
        with reporting(self, "save the settings"):
            if self.first_run and not changes:
                changes = {"companies": self.current.companies}  # setup is done: ask no more
            if changes:
                self.app.service.save_settings(**changes)  # type: ignore[attr-defined]
                if not self.first_run:
                    self.notify(f"Saved {plural(len(changes), 'setting')}")
            self.dismiss(bool(changes))

    def action_cancel(self) -> None:
        """Leave; first ask when the form holds unsaved changes."""
        if self.first_run:
            self.action_skip()
            return
        changes, errors = parse_changes(self.current, self.texts())
        if not changes and not errors:
            self.dismiss(False)
            return
        from quizzer.tui.screens.confirm import ConfirmScreen

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(False)

        self.app.push_screen(ConfirmScreen("Discard the unsaved changes?"), answered)

    def action_skip(self) -> None:
        """First run: keep the defaults and do not ask again."""
        with reporting(self, "save the settings"):
            self.app.service.save_settings(companies=self.current.companies)  # type: ignore[attr-defined]
            self.dismiss(False)
