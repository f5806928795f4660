"""Cards and the review log.

Revision ID: 0001
Revises:

Idempotent: a run that an older quizzer interrupted halfway is finished, not repeated.
"""

import sqlalchemy as sa
from alembic import op

from quizzer.db.types import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("cards"):
        op.create_table(
            "cards",
            sa.Column("question_id", sa.String(200), primary_key=True),
            sa.Column("state", sa.Integer, nullable=False),
            sa.Column("step", sa.Integer, nullable=True),
            sa.Column("stability", sa.Float, nullable=True),
            sa.Column("difficulty", sa.Float, nullable=True),
            sa.Column("due", UTCDateTime(), nullable=False),
            sa.Column("last_review", UTCDateTime(), nullable=True),
            sa.Column("reps", sa.Integer, nullable=False),
            sa.Column("lapses", sa.Integer, nullable=False),
            sa.Column("suspended", sa.Boolean, nullable=False),
            sa.Column("created_at", UTCDateTime(), nullable=False),
        )
    op.create_index("ix_cards_due", "cards", ["due"], if_not_exists=True)
    if not inspector.has_table("reviews"):
        op.create_table(
            "reviews",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("question_id", sa.String(200), nullable=False),
            sa.Column("rating", sa.Integer, nullable=False),
            sa.Column("reviewed_at", UTCDateTime(), nullable=False),
            sa.Column("duration_ms", sa.Integer, nullable=True),
            sa.Column("state_before", sa.Integer, nullable=True),
            sa.Column("state_after", sa.Integer, nullable=False),
            sa.Column("stability", sa.Float, nullable=True),
            sa.Column("difficulty", sa.Float, nullable=True),
            sa.Column("due_after", UTCDateTime(), nullable=False),
            sa.Column("card_before", sa.Text, nullable=True),
        )
    op.create_index("ix_reviews_reviewed_at", "reviews", ["reviewed_at"], if_not_exists=True)
    op.create_index(
        "ix_reviews_question", "reviews", ["question_id", "reviewed_at"], if_not_exists=True
    )


def downgrade() -> None:
    op.drop_table("reviews")
    op.drop_table("cards")
