"""The fixtures of every test: see tests/support/fixtures.py (state dir isolation, layout, and
`run_cli`, the CLI with stand-in collaborators)."""

pytest_plugins = ("tests.support.fixtures", "tests.support.cost")
