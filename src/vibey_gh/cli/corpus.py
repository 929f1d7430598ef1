"""`corpus` (being built)."""

from __future__ import annotations

import click


@click.command()
def corpus() -> None:
    """(being built)"""
    raise click.ClickException("not built yet")
