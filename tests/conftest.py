"""The fixtures of every test: see tests/support/fixtures.py (state dir isolation, layout)."""

pytest_plugins = ("tests.support.fixtures",)
