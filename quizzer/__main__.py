from quizzer.cli.launch import run

run()
