"""`quizzer list` and `quizzer show`: plain, scriptable terminal output.

Bank text is printed as `rich.text.Text`, never as a markup string, so brackets such as
`[/bold]` and emoji codes such as `:smile:` in a question show exactly as written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import click
from rich.table import Table
from rich.text import Text

from quizzer.bank.model import Bank, Question
from quizzer.bank.order import asked_count
from quizzer.cli.common import check_ids, console, filter_options, make_filters, state
from quizzer.review.model import plural

SORTS = ("asked", "id", "topic", "difficulty")


def _sorted(
    bank: Bank, questions: Sequence[Question], sort: str, companies: Sequence[str] = ()
) -> list[Question]:
    keys = {
        "asked": lambda q: (-asked_count(bank, q, companies), q.id),
        "id": lambda q: q.id,
        "topic": lambda q: (q.topic, q.id),
        "difficulty": lambda q: ({"easy": 0, "medium": 1, "hard": 2}[q.difficulty], q.id),
    }
    return sorted(questions, key=keys[sort])


def _as_json(bank: Bank, question: Question) -> dict[str, object]:
    return {
        "id": question.id,
        "topic": question.topic,
        "difficulty": question.difficulty,
        "question": question.question,
        "themes": list(question.themes),
        "asked_by": dict(sorted(question.asked_by.items(), key=lambda kv: (-kv[1], kv[0]))),
        "times_asked": question.times_asked,
        "tiers": sorted(bank.tier_of(question)),
        "exercise": question.exercise,
    }


@click.command("list")
@filter_options
@click.option("--due", is_flag=True, help="Only what a study session would show now, in order.")
@click.option("--sort", type=click.Choice(SORTS), default=None, help="Order (default: asked).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show at most N.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(
    ctx: click.Context,
    due: bool,
    sort: str | None,
    limit: int | None,
    as_json: bool,
    **filter_args: object,
) -> None:
    """List questions, with who asks them and how often."""
    app = state(ctx)
    bank = app.bank
    filters = make_filters(bank, **filter_args)  # type: ignore[arg-type]
    if due:
        ids = app.review_service(quick=True).queue(filters)
        questions = [bank.questions[i] for i in ids]
        if sort:
            questions = _sorted(bank, questions, sort, filters.companies)
    else:
        questions = _sorted(bank, bank.select(filters), sort or "asked", filters.companies)
    questions = questions[:limit] if limit else questions
    if as_json:
        click.echo(json.dumps([_as_json(bank, q) for q in questions], indent=2))
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    widest = max((len(q.id) for q in questions), default=2)
    table.add_column("id", no_wrap=True, min_width=min(widest, 40))
    table.add_column("asked", no_wrap=True, overflow="ellipsis", min_width=12, max_width=22)
    table.add_column("question", no_wrap=True, overflow="ellipsis", min_width=10)
    for q in questions:
        n = asked_count(bank, q, filters.companies)
        asked = f"{n:>2}  {bank.asked_summary(q, top=2)}" if q.times_asked else "-"
        table.add_row(Text(q.id), Text(asked), Text(q.question))
    console.print(table)
    whose = "by " + ", ".join(filters.companies) if filters.companies else "in all"
    console.print(
        f"{plural(len(questions), 'question')}; asked: write-ups "
        f"{whose} that asked one of the question's themes",
        style="dim",
        markup=False,
    )


@click.command("show")
@click.argument("question_id")
@click.pass_context
def show_cmd(ctx: click.Context, question_id: str) -> None:
    """Show one question with its model answer."""
    from rich.markdown import Markdown
    from rich.panel import Panel

    from quizzer.bank.code_blocks import describe as describe_code

    bank = state(ctx).bank
    resolved = bank.resolve(question_id)
    if resolved is None:
        check_ids("question", [question_id], bank.questions)
    question = bank.questions[resolved or question_id]
    topic = bank.topics[question.topic].name
    subtitle = Text(f"{topic} · {question.difficulty}")
    console.print(Panel(Text(question.question), title=Text(question.id), subtitle=subtitle))
    if question.times_asked:
        asked = bank.asked_summary(question, 6)
        ups = plural(question.times_asked, "interview write-up")
        console.print(Text(f"Its themes came up in {ups}: {asked}"))
    console.print(Markdown(question.answer))
    code = describe_code(question)
    if code:
        console.print(Text(code, style="dim"))
    console.print("\n[bold]Key points[/bold]")
    for point in question.key_points:
        console.print(Text(f"  ☐ {point}"))
    if question.follow_ups:
        console.print("\n[bold]Follow-ups[/bold]")
        for follow in question.follow_ups:
            console.print(Text(f"  • {follow}"))
    if question.references:
        console.print("\n[bold]References[/bold]")
        for ref in question.references:
            console.print(Text(f"  {ref.title} — {ref.url}"))
    if question.exercise:
        console.print(f"\nExercise: quizzer exercise {question.exercise}")
