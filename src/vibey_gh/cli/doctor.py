"""`doctor` (being built)."""

from __future__ import annotations

import click


@click.command()
def doctor() -> None:
    """(being built)"""
    raise click.ClickException("not built yet")
