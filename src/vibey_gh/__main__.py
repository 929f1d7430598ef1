"""`python -m vibey_gh` runs the CLI."""

from .cli.main import main

main()
