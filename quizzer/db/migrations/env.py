"""Migration environment: runs on the connection quizzer hands over (never a config file).

The caller has already begun the transaction, so every step commits together.
"""

from __future__ import annotations

from alembic import context

from quizzer.db.models import Base

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=Base.metadata,
    render_as_batch=True,
)
context.run_migrations()
