from lintaid.cli import run

run()
