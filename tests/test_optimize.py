"""`quizzer optimize`: a fit to a history drawn from known FSRS parameters beats the defaults
on held-out cards; too little history is refused; stored parameters drive the scheduler."""

from __future__ import annotations

import json
import sys
from datetime import UTC

import pytest
from fsrs.scheduler import DEFAULT_PARAMETERS
from sqlalchemy import insert

from quizzer.cli.main import entry
from quizzer.db.engine import open_database
from quizzer.db.models import ReviewRow
from quizzer.review.clock import DayBoundary
from quizzer.review.optimize import (
    MIN_REVIEWS,
    OptimizerMissing,
    fit,
    load_histories,
    optimize,
    score,
    scored_reviews,
    split_by_card,
)
from quizzer.review.service import ReviewService
from quizzer.review.settings import PREFIX, FittedParameters, from_rows
from quizzer.review.simulate import TRUE_PARAMETERS, SimulatedReview, simulate_history


@pytest.fixture(scope="module")
def history() -> list[SimulatedReview]:
    """About 9,000 reviews of 300 cards over a year, drawn from TRUE_PARAMETERS."""
    return simulate_history(300, 365, seed=1)


def write(url: str, reviews: list[SimulatedReview]) -> None:
    """The simulated reviews as rows of the real review table."""
    sessions = open_database(url)
    rows = [
        {
            "question_id": r.question_id,
            "rating": r.rating,
            "reviewed_at": r.reviewed_at,
            "duration_ms": 6000,
            "state_before": r.state_before,
            "state_after": r.state_after,
            "stability": r.stability,
            "difficulty": r.difficulty,
            "due_after": r.due_after,
            "card_before": None,
        }
        for r in reviews
    ]
    with sessions.begin() as session:
        session.execute(insert(ReviewRow), rows)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = entry(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_fit_beats_the_defaults_on_held_out_cards(history, db_url) -> None:
    write(db_url, history)
    histories = load_histories(open_database(db_url))
    assert sum(len(h.reviews) for h in histories) == len(history)
    train, test = split_by_card(histories)
    assert {h.question_id for h in train}.isdisjoint(h.question_id for h in test)
    assert 0.1 < len(test) / len(histories) < 0.3

    report = optimize(histories)

    assert len(report.parameters) == len(DEFAULT_PARAMETERS) == 21
    assert report.fitted.reviews == report.default.reviews == scored_reviews(test) > 500
    assert report.fitted.log_loss < report.default.log_loss - 0.01
    assert report.fitted.rmse_bins < report.default.rmse_bins
    # As good as the parameters the history was drawn from, give or take noise.
    assert report.fitted.log_loss < score(TRUE_PARAMETERS, test).log_loss + 0.01
    assert report.improved and report.seconds < 30


def test_too_little_history_is_refused_in_one_line(capsys, db_url) -> None:
    small = simulate_history(20, 365, seed=2)
    write(db_url, small)
    code, out, err = run(capsys, "--db", db_url, "optimize")
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and f"at least {MIN_REVIEWS:,}" in err
    assert "Traceback" not in err


def test_optimize_stores_parameters_that_config_shows(capsys, history, db_url) -> None:
    write(db_url, history)
    code, out, err = run(capsys, "--db", db_url, "optimize", "--dry-run")
    assert code == 0, err
    assert "log loss" in out and "default" in out and "Dry run: nothing stored." in out
    assert "FSRS parameters: default" in run(capsys, "--db", db_url, "config")[1]

    code, out, err = run(capsys, "--db", db_url, "optimize")
    assert code == 0, err
    assert "Stored (fitted on " in out
    code, out, _ = run(capsys, "--db", db_url, "config")
    assert "FSRS parameters: fitted on " in out
    shown = json.loads(run(capsys, "--db", db_url, "config", "show", "--json")[1])
    assert len(shown["parameters"]["values"]) == 21 and shown["parameters"]["reviews"] > 0

    code, out, _ = run(capsys, "--db", db_url, "optimize", "--reset")
    assert code == 0 and "default FSRS parameters" in out
    assert "FSRS parameters: default" in run(capsys, "--db", db_url, "config")[1]


def test_stored_parameters_change_what_the_scheduler_does(small_bank, clock, db_url) -> None:
    def service() -> ReviewService:  # settings read from the database, as the CLI does
        return ReviewService(
            open_database(db_url), small_bank, clock=clock, fuzz=False, day=DayBoundary(UTC, 4)
        )

    qid = sorted(small_bank.questions)[0]
    before = service().preview(qid)
    service().save_settings(parameters=FittedParameters(TRUE_PARAMETERS, 5000, "2026-06-01"))
    fresh = service()
    assert fresh.settings.parameters is not None
    assert fresh.scheduler.parameters == TRUE_PARAMETERS
    after = fresh.preview(qid)
    assert after != before  # Easy on a new card: w3 = 3.5 days against the default 8.3
    assert after[max(after)] < before[max(before)]


def test_damaged_stored_parameters_fall_back_to_the_defaults() -> None:
    good = json.dumps([list(TRUE_PARAMETERS), 10, "2026-06-01"])
    assert from_rows({PREFIX + "parameters": good}).parameters.values == TRUE_PARAMETERS
    for bad in ("[1, 2]", json.dumps([[0.1] * 19, 10, "x"]), json.dumps([[99.0] * 21, 1, "x"])):
        assert from_rows({PREFIX + "parameters": bad}).parameters is None


def test_without_the_extra_it_names_the_extra(capsys, history, db_url, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "fsrs_rs_python", None)  # import fails as if absent
    with pytest.raises(OptimizerMissing, match=r"quizzer\[optimizer\]"):
        fit([])
    write(db_url, history)
    code, _, err = run(capsys, "--db", db_url, "optimize")
    assert code != 0 and err.count("\n") == 1 and 'pip install "quizzer[optimizer]"' in err
