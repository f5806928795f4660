"""The schema revision this version of quizzer writes (stdlib only, read before any open)."""

HEAD = "0002"  # newest revision in migrations/versions; a test keeps the two in step
