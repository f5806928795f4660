"""`quizzer optimize`: fit the FSRS parameters to your own reviews and keep them if better."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from quizzer.cli.common import console, state

if TYPE_CHECKING:
    from quizzer.review.optimize import OptimizeReport


@click.command("optimize")
@click.option("--dry-run", is_flag=True, help="Fit and report, but store nothing.")
@click.option("--reset", is_flag=True, help="Go back to the default FSRS parameters.")
@click.pass_context
def optimize_cmd(ctx: click.Context, dry_run: bool, reset: bool) -> None:
    """Fit the FSRS parameters to your review history.

    A fifth of your cards is held out; the default and the fitted parameters are both
    scored on them (log loss, RMSE). The fitted ones are stored, and used from then on,
    only if they predict those reviews better. Needs the `optimizer` extra.
    """
    from quizzer.review.optimize import load_histories, optimize
    from quizzer.review.settings import FittedParameters

    app = state(ctx)
    service = app.review_service()
    if reset:
        service.save_settings(parameters=None)
        console.print("The scheduler uses the default FSRS parameters again.", markup=False)
        return
    histories = load_histories(app.sessions)  # type: ignore[arg-type]
    in_use = service.settings.parameters
    report = optimize(histories, in_use=in_use.values if in_use else None)
    for line in _lines(report, sum(len(h.reviews) for h in histories)):
        console.print(line, markup=False)
    if dry_run:
        console.print("Dry run: nothing stored.", markup=False)
    elif not report.improved:
        console.print(
            "Not stored: the fitted parameters predict the held-out reviews no better than"
            " the ones in use; nothing changed.",
            markup=False,
        )
    else:
        today = service.clock().date().isoformat()
        fitted = FittedParameters(report.parameters, report.train_reviews, today)
        service.save_settings(parameters=fitted)
        console.print(
            f"Stored ({fitted.describe()}): the scheduler uses them from now on."
            " `quizzer config` shows them; `quizzer optimize --reset` goes back to the defaults.",
            markup=False,
        )


def _lines(report: OptimizeReport, total: int) -> list[str]:
    """The report as plain lines: sizes, the score table, the fitted vector."""
    rows = [("default", report.default), ("in use", report.in_use), ("fitted", report.fitted)]
    table = [
        f"  {name:10}{s.log_loss:>10.4f}{s.rmse_bins:>14.4f}" for name, s in rows if s is not None
    ]
    change = report.fitted.log_loss / report.default.log_loss - 1
    return [
        f"History: {total:,} reviews. Fitted on {report.train_cards:,} cards in"
        f" {report.seconds:.1f} s ({report.train_reviews:,} reviews a day or more apart).",
        f"Held out: {report.test_cards:,} cards chosen by id ({report.fitted.reviews:,} reviews):",
        f"  {'':10}{'log loss':>10}{'RMSE (bins)':>14}",
        *table[:-1],
        f"{table[-1]}   ({change:+.1%} log loss against the defaults)",
        "Parameters: " + " ".join(f"{v:.4g}" for v in report.parameters),
    ]
