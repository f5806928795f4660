"""A synthetic bank and history for the benchmarks (never used by the app itself)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from quizzer.bank.loader import check_bank
from quizzer.bank.model import Bank, Question
from quizzer.db.models import CardRow, ReviewRow

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def synthetic_bank(n: int, seed: int = 0) -> Bank:
    """The real reference data with `n` generated questions spread over real themes."""
    bank, _ = check_bank()
    rng = random.Random(seed)
    themes = list(bank.themes.values())
    questions = {}
    for i in range(n):
        theme = rng.choice(themes)
        qid = f"syn-{i:05d}"
        questions[qid] = Question(
            id=qid,
            topic=theme.topic,
            difficulty=rng.choice(["easy", "medium", "hard"]),
            question=f"Synthetic question {i} about {theme.text}?",
            answer=(
                f"Answer {i}. Bandwidth is $B = N / t$ for `N` bytes.\n\n"
                "```python\nfor i in range(n):\n    total += x[i]\n```\n\n"
                + "Filler sentence with **bold** and a list.\n\n- one\n- two\n"
                * 3
            ),
            key_points=("one", "two", "three"),
            follow_ups=("why?",),
            themes=(theme.id,),
            asked_by=dict(theme.asked_by),
            interviews=tuple(f"iv-{k}" for k in range(theme.interviews)),
        )
    bank.questions = questions
    return bank


def fill_history(sessions, bank: Bank, reviews: int, seed: int = 0) -> None:
    """One card row per question and `reviews` review rows, inserted in bulk."""
    rng = random.Random(seed)
    ids = list(bank.questions)
    with sessions.begin() as session:
        cards = []
        for qid in ids:
            last = NOW - timedelta(days=rng.uniform(0, 60))
            stability = rng.uniform(0.5, 120)
            cards.append(
                {
                    "question_id": qid,
                    "state": 2,
                    "step": None,
                    "stability": stability,
                    "difficulty": rng.uniform(1, 10),
                    "due": last + timedelta(days=stability * rng.uniform(0.5, 1.5)),
                    "last_review": last,
                    "reps": 5,
                    "lapses": 0,
                    "suspended": False,
                    "leech": False,
                    "created_at": NOW - timedelta(days=400),
                }
            )
        session.execute(insert(CardRow), cards)
        batch = []
        for k in range(reviews):
            at = NOW - timedelta(minutes=rng.uniform(0, 365 * 24 * 60))
            batch.append(
                {
                    "question_id": ids[k % len(ids)],
                    "rating": rng.randint(1, 4),
                    "reviewed_at": at,
                    "duration_ms": 8000,
                    "state_before": 2,
                    "state_after": 2,
                    "stability": 10.0,
                    "difficulty": 5.0,
                    "due_after": at + timedelta(days=10),
                    "card_before": None,
                }
            )
            if len(batch) == 50_000:
                session.execute(insert(ReviewRow), batch)
                batch = []
        if batch:
            session.execute(insert(ReviewRow), batch)
