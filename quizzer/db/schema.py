"""The schema revisions this version of quizzer knows (stdlib only, read before any open)."""

REVISIONS = ("0001", "0002")  # oldest first; a test keeps these in step with migrations/
HEAD = REVISIONS[-1]
# Every table quizzer creates; a file holding any other table belongs to something else.
TABLES = frozenset({"cards", "reviews", "exercise_attempts", "settings", "alembic_version"})
