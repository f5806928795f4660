"""Bury and leech flags on cards; exercise attempts; settings.

Revision ID: 0002
Revises: 0001

Idempotent: a run that an older quizzer interrupted halfway is finished, not repeated.
"""

import sqlalchemy as sa
from alembic import op

from quizzer.db.types import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    columns = {c["name"] for c in inspector.get_columns("cards")}
    if "buried_until" not in columns or "leech" not in columns:
        with op.batch_alter_table("cards") as batch:
            if "buried_until" not in columns:
                batch.add_column(sa.Column("buried_until", UTCDateTime(), nullable=True))
            if "leech" not in columns:
                batch.add_column(
                    sa.Column("leech", sa.Boolean, nullable=False, server_default=sa.false())
                )
    if not inspector.has_table("exercise_attempts"):
        op.create_table(
            "exercise_attempts",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("exercise", sa.String(100), nullable=False),
            sa.Column("track", sa.String(50), nullable=False),
            sa.Column("started_at", UTCDateTime(), nullable=False),
            sa.Column("duration_s", sa.Float, nullable=False),
            sa.Column("device", sa.String(20), nullable=False),
            sa.Column("status", sa.String(20), nullable=False),
            sa.Column("passed", sa.Integer, nullable=False),
            sa.Column("failed", sa.Integer, nullable=False),
            sa.Column("errors", sa.Integer, nullable=False),
            sa.Column("skipped", sa.Integer, nullable=False),
            sa.Column("metrics", sa.Text, nullable=False),
        )
    op.create_index(
        "ix_exercise_attempts_exercise", "exercise_attempts", ["exercise"], if_not_exists=True
    )
    if not inspector.has_table("settings"):
        op.create_table(
            "settings",
            sa.Column("key", sa.String(100), primary_key=True),
            sa.Column("value", sa.Text, nullable=False),
        )


def downgrade() -> None:
    op.drop_table("settings")
    op.drop_table("exercise_attempts")
    with op.batch_alter_table("cards") as batch:
        batch.drop_column("leech")
        batch.drop_column("buried_until")
