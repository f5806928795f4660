"""Migration environment: runs on the engine quizzer hands over (never a config file)."""

from __future__ import annotations

from alembic import context

from quizzer.db.models import Base

engine = context.config.attributes["engine"]
with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=True,
    )
    context.run_migrations()
