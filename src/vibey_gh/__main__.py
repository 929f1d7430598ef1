"""`python -m vibey_gh` runs the CLI."""

import sys

from .cli.entry import main

sys.exit(main())
