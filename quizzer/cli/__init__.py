"""The `quizzer` command line: thin commands over the core services."""
