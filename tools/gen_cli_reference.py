"""Regenerate docs/reference/cli.md from the commands' own --help.

python tools/gen_cli_reference.py            write the page
python tools/gen_cli_reference.py --check    exit 1 when the page is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from vibey_gh.cli.reference import render_cli_reference, write_cli_reference

PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "cli.md"


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != render_cli_reference():
            print(f"{PAGE} is out of date; run: python tools/gen_cli_reference.py")
            return 1
        return 0
    if argv[1:]:
        print(__doc__)
        return 2
    write_cli_reference(PAGE)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
