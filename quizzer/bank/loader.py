"""Assemble a Bank from the reference data and question files, checking every reference."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from quizzer.bank import schema
from quizzer.bank.files import question_files
from quizzer.bank.model import Bank, Company, Interview, Question, Reference, Theme, Topic
from quizzer.bank.parse import BankError, Problem, parse_yaml, records, suggest
from quizzer.paths import bank_dir, shipped_exercises_root


def _label(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _load_list(path: Path, model: type, problems: list[Problem]) -> list:
    label = _label(path)
    if not path.is_file():
        problems.append(Problem(label, 0, "file is missing"))
        return []
    data, node, found = parse_yaml(path, label)
    problems.extend(found)
    return [(rec, label, line) for rec, line in records(data, node, model, label, problems)]


def _load_reference(root: Path, problems: list[Problem]) -> Bank:
    companies = {
        r.id: Company(r.id, r.name, r.tier, r.interviews)
        for r, _, _ in _load_list(root / "companies.yaml", schema.CompanyRecord, problems)
    }
    topics = {
        r.id: Topic(r.id, r.name, r.interviews, r.track)
        for r, _, _ in _load_list(root / "topics.yaml", schema.TopicRecord, problems)
    }
    themes: dict[str, Theme] = {}
    for r, label, line in _load_list(root / "themes.yaml", schema.ThemeRecord, problems):
        if r.topic not in topics:
            problems.append(Problem(label, line, f"unknown topic '{r.topic}'", r.id))
        for company in r.asked_by:
            if company not in companies:
                problems.append(Problem(label, line, f"unknown company '{company}'", r.id))
        track = r.track or (topics[r.topic].track if r.topic in topics else "core")
        themes[r.id] = Theme(
            r.id, r.topic, r.theme, r.coding, r.interviews, dict(r.asked_by), track, r.first, line
        )
    interviews: dict[str, Interview] = {}
    for r, label, line in _load_list(root / "interviews.yaml", schema.InterviewRecord, problems):
        if r.company not in companies:
            problems.append(Problem(label, line, f"unknown company '{r.company}'", r.id))
        for theme in r.themes:
            if theme not in themes:
                problems.append(Problem(label, line, f"unknown theme '{theme}'", r.id))
        interviews[r.id] = Interview(r.id, r.company, r.tier, r.type, r.round, tuple(r.themes))
    return Bank(companies, topics, themes, interviews, questions={})


def _load_catalog(problems: list[Problem]) -> dict[str, str]:
    path = shipped_exercises_root() / "catalog.yaml"
    entries = _load_list(path, schema.CatalogEntry, problems)
    return {r.name: r.status for r, _, _ in entries}


def _check_refs(
    r: schema.QuestionRecord, bank: Bank, label: str, line: int, problems: list[Problem]
) -> None:
    def bad(kind: str, value: str, known: Iterable[str]) -> None:
        msg = f"unknown {kind} '{value}'{suggest(value, known)}"
        problems.append(Problem(label, line, msg, r.id))

    if r.topic not in bank.topics:
        bad("topic", r.topic, bank.topics)
    for theme in r.themes:
        if theme not in bank.themes:
            bad("theme", theme, bank.themes)
    for company in r.companies:
        if company not in bank.companies:
            bad("company", company, bank.companies)
    if r.exercise is not None and r.exercise not in bank.exercises:
        bad("exercise", r.exercise, bank.exercises)


def _add_questions(files: Sequence[Path], bank: Bank, problems: list[Problem]) -> None:
    seen: dict[str, str] = {}  # id or alias -> where it was first defined
    by_theme: dict[str, list[Interview]] = defaultdict(list)
    for interview in bank.interviews.values():
        for theme in interview.themes:
            by_theme[theme].append(interview)
    for path in files:
        label = _label(path)
        if not path.exists():
            problems.append(Problem(label, 0, "no such file or folder"))
            continue
        data, node, found = parse_yaml(path, label)
        problems.extend(found)
        for r, line in records(data, node, schema.QuestionRecord, label, problems):
            _check_refs(r, bank, label, line, problems)
            for name, kind in [(r.id, "id"), *((a, "alias") for a in r.aliases)]:
                if name in seen:
                    msg = f"duplicate {kind} '{name}' (first defined at {seen[name]})"
                    problems.append(Problem(label, line, msg, r.id))
                else:
                    seen[name] = f"{label}:{line}"
            bank.questions[r.id] = _to_question(r, by_theme, label, line)
            for alias in r.aliases:
                bank.aliases.setdefault(alias, r.id)


def _to_question(
    r: schema.QuestionRecord, by_theme: dict[str, list[Interview]], label: str, line: int
) -> Question:
    asked: dict[str, int] = {}
    interviews: dict[str, None] = {}
    for theme in r.themes:
        for interview in by_theme.get(theme, ()):
            if interview.id not in interviews:
                interviews[interview.id] = None
                asked[interview.company] = asked.get(interview.company, 0) + 1
    for company in r.companies:
        asked.setdefault(company, 1)
    return Question(
        id=r.id,
        topic=r.topic,
        difficulty=r.difficulty,
        question=r.question,
        answer=r.answer,
        key_points=tuple(r.key_points),
        follow_ups=tuple(r.follow_ups),
        references=tuple(Reference(ref.title, ref.url) for ref in r.references),
        themes=tuple(r.themes),
        aliases=tuple(r.aliases),
        exercise=r.exercise,
        explicit_companies=tuple(r.companies),
        asked_by=asked,
        interviews=tuple(interviews),
        source=label,
        line=line,
    )


def _check_firsts(bank: Bank, path: Path, full: bool, problems: list[Problem]) -> None:
    """A theme's `first` question must answer that theme, and (in the full built-in bank,
    where every question is present) exist."""
    for theme in bank.themes.values():
        if theme.first is None:
            continue
        question = bank.get(theme.first)
        if question is None and full:
            known = suggest(theme.first, bank.questions)
            msg = f"first question '{theme.first}' is not in the bank{known}"
            problems.append(Problem(_label(path), theme.line, msg, theme.id))
        elif question is not None and theme.id not in question.themes:
            msg = f"first question '{theme.first}' does not list this theme"
            problems.append(Problem(_label(path), theme.line, msg, theme.id))


def check_bank(
    question_paths: Sequence[Path] | None = None, extra: Sequence[Path] = ()
) -> tuple[Bank, list[Problem]]:
    """Load everything and return the bank with every problem found (possibly none)."""
    problems: list[Problem] = []
    root = bank_dir()
    bank = _load_reference(root, problems)
    bank.exercises = _load_catalog(problems)
    paths = list(question_paths) if question_paths else [root / "questions", *extra]
    _add_questions(question_files(paths), bank, problems)
    _check_firsts(bank, root / "themes.yaml", not question_paths, problems)
    problems.sort(key=lambda p: (p.path, p.line))
    return bank, problems


def load_bank(extra: Sequence[Path] = ()) -> Bank:
    """The built-in bank plus any extra user banks; raises BankError on any problem."""
    bank, problems = check_bank(extra=extra)
    if problems:
        raise BankError(problems)
    return bank
