"""The fixtures of every test: see tests/support/fixtures.py (state dir isolation, layout, and
`run_cli`, the CLI with stand-in collaborators), tests/support/shared_calibration.py (one real
embedded calibration the tests that only read it share) and tests/support/cost.py (what each
test costs, recorded when VIBEY_TEST_COST names a file)."""

pytest_plugins = (
    "tests.support.fixtures",
    "tests.support.shared_calibration",
    "tests.support.cost",
)
