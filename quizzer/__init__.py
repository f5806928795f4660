"""quizzer: spaced repetition and graded exercises for AI-infrastructure interviews."""

__version__ = "0.1.0"
