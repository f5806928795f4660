from quizzer.cli.main import run

run()
