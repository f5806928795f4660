"""Bank text is shown exactly as written: never read as Rich or Textual markup."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Static

from quizzer.bank import cache, loader
from quizzer.bank.model import Bank
from quizzer.cli.main import entry
from quizzer.tui.app import QuizzerApp
from quizzer.tui.screens.browse import BrowseScreen
from quizzer.tui.screens.home import HomeScreen
from quizzer.tui.screens.study import StudyScreen

TOPIC = "[/bold] GPU [@click=app.quit]"
COMPANY = "[red]Acme[/red] [/b]"
REFERENCE = {
    "companies.yaml": f"- {{id: acme, name: '{COMPANY}', tier: T0, interviews: 2}}\n",
    "topics.yaml": f"- {{id: gpu, name: '{TOPIC}', interviews: 1}}\n"
    "- {id: algo, name: Algo, interviews: 1}\n",
    "themes.yaml": "- {id: gpu-warps, topic: gpu, theme: Warps, interviews: 1, asked_by: {acme: 1}}\n"
    "- {id: algo-code-lru-cache, topic: algo, theme: LRU, interviews: 1, asked_by: {acme: 1}}\n",
    "interviews.yaml": "- {id: acme-1, company: acme, tier: T0, type: intern,"
    " themes: [gpu-warps, algo-code-lru-cache]}\n",
}
QUESTION = "Markup [/bold] [@click=app.quit]click me[/] [red]x[/red] :smile:"
ANSWER = "Shown as written: [/bold] and [red]x[/red] and [@click=app.quit]quit[/]."
POINT = "[/bold] a [red]point[/red]"
ATTACK = f"""\
- id: aa-markup
  topic: gpu
  themes: [gpu-warps]
  difficulty: easy
  question: "{QUESTION}"
  answer: "{ANSWER}"
  key_points: ["{POINT}"]
  follow_ups: ["[@click=app.quit]follow[/] [red]up[/red]"]
  references:
    - title: "[/bold] reference [red]title[/red]"
      url: https://example.com/a
"""
CLICK_ONLY = """\
- id: aa-click
  topic: algo
  difficulty: easy
  question: "Press [@click=app.quit]HERE-TO-QUIT[/] now"
  answer: Nothing happens when you click it.
  key_points: [nothing]
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, small_bank: Bank) -> Iterator[Path]:
    """Reference data whose topic and company names are markup, used as the built-in bank.

    `small_bank` (which `make_service` needs) is loaded first, from the real reference data.
    """
    root = tmp_path_factory.mktemp("reference")
    for name, text in REFERENCE.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "questions").mkdir()
    for name, text in (("attack", ATTACK), ("click", CLICK_ONLY)):
        (root / name).mkdir()
        (root / name / "q.yaml").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "bank_dir", lambda: root)
        patch.setattr(cache, "bank_dir", lambda: root)
        yield root


def bank_of(reference: Path, name: str) -> Bank:
    bank, problems = loader.check_bank([reference / name])
    assert problems == []
    return bank


def run_cli(reference: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = entry(["--bank", str(reference / "attack"), *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_bank_validate_accepts_markup_as_text(reference, capsys):
    assert entry(["bank", "validate", str(reference / "attack")]) == 0


def test_show_prints_every_part_literally(reference, capsys):
    out = run_cli(reference, capsys, "show", "aa-markup")
    for text in (QUESTION, ANSWER, POINT, TOPIC, COMPANY, "[@click=app.quit]follow[/] [red]up"):
        assert text in out, text
    assert "[/bold] reference [red]title[/red] — https://example.com/a" in out


def test_list_prints_question_and_companies_literally(reference, capsys):
    out = run_cli(reference, capsys, "list", "--sort", "id", "--limit", "1")
    row = next(line for line in out.splitlines() if line.startswith("aa-markup"))
    assert "1  [red]Acme[/" in row and "Markup [/bold] [@click=app.quit]click me[/]" in row


def test_stats_prints_topic_and_company_names_literally(reference, capsys):
    out = run_cli(reference, capsys, "stats")
    assert TOPIC in out and COMPANY in out


def test_exercise_table_prints_company_names_literally(reference, capsys):
    out = run_cli(reference, capsys, "exercise")
    row = next(line for line in out.splitlines() if line.startswith("lru-cache"))
    assert "1: [red]Acme[/re" in row


def screen_text(app: QuizzerApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def find(app: QuizzerApp, text: str) -> tuple[int, int]:
    """Screen offset of the middle of `text`, which must be on one line of the screen."""
    for y, line in enumerate(screen_text(app).splitlines()):
        if text in line:
            return line.index(text) + len(text) // 2, y
    raise AssertionError(f"{text!r} is not on the screen:\n{screen_text(app)}")


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def shown(pilot, text: str) -> tuple[int, int]:
    """`find`, once a table has sized its columns to the rows it was given (a slow machine
    can paint the header-sized layout first)."""
    for _ in range(100):
        if text in screen_text(pilot.app):
            break
        await pilot.pause(0.05)
    return find(pilot.app, text)


async def test_study_shows_question_meta_and_answer_literally(reference, make_service):
    app = QuizzerApp(make_service(bank_of(reference, "attack")), start_study=True)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, StudyScreen)
        assert str(app.screen.query_one("#question", Static).visual) == QUESTION
        find(app, QUESTION)
        find(app, f"{TOPIC}  ·  easy  ·  its themes came up in 1 write-up: {COMPANY}")
        await pilot.click(offset=find(app, "[@click=app.quit]click me[/]"))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, StudyScreen)
        await pilot.press("space")
        await settle(pilot)
        for token in ("[/bold]", "[red]x[/red]", "[@click=app.quit]quit[/]", POINT):
            find(app, token)
        assert app.is_running


async def test_clicking_an_action_in_a_question_does_nothing(reference, make_service):
    app = QuizzerApp(make_service(bank_of(reference, "click")), start_study=True)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.click(offset=find(app, "HERE-TO-QUIT"))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, StudyScreen)
        find(app, "Press [@click=app.quit]HERE-TO-QUIT[/] now")


async def test_browse_shows_question_and_answer_literally(reference, make_service):
    app = QuizzerApp(make_service(bank_of(reference, "attack")))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        app.action_browse()
        await settle(pilot)
        assert isinstance(app.screen, BrowseScreen)
        for token in (
            "[/bold]",
            "[red]x[/red]",
            "[@click=app.quit]click",
            "[@click=app.quit]quit[/]",
        ):
            find(app, token)
        await pilot.click(offset=find(app, "[@click=app.quit]quit[/]"))
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, BrowseScreen)


async def test_home_shows_topic_and_company_names_literally(reference, make_service):
    app = QuizzerApp(make_service(bank_of(reference, "attack")), targets=["acme"])
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        await shown(pilot, TOPIC)
        await shown(pilot, COMPANY)
