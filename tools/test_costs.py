"""Rank the tests recorded by `VIBEY_TEST_COST=FILE pytest …` by what they cost on an idle
machine: CPU of the test process and its children plus its fixed waits (sleeps by design).

    python tools/test_costs.py FILE [--top N]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    for row in rows:
        row.setdefault("fixed_wait_s", row.get("asleep_s", 0.0))  # recorded before the split
        row.setdefault("polling_s", 0.0)
        row["cost_s"] = row["cpu_s"] + row["children_cpu_s"] + row["fixed_wait_s"]
    rows.sort(key=lambda row: row["cost_s"], reverse=True)
    print(f"{'cost':>7} {'cpu':>7} {'child':>7} {'fixed':>7} {'polling':>7} {'wall':>7}  test")
    for row in rows[: args.top]:
        print(
            f"{row['cost_s']:7.1f} {row['cpu_s']:7.1f} {row['children_cpu_s']:7.1f}"
            f" {row['fixed_wait_s']:7.1f} {row['polling_s']:7.1f} {row['wall_s']:7.1f}"
            f"  {row['test']}"
        )
    total = sum(row["cost_s"] for row in rows)
    wall = sum(row["wall_s"] for row in rows)
    print(
        f"{total:7.1f} s of CPU and fixed waits over {len(rows)} tests ({wall:.0f} s of wall time)"
    )


if __name__ == "__main__":
    main()
