#!/usr/bin/env python3
"""check_settings_table.py NBCX_INFO ROOT - the settings table is one.

- `nbcx-info --markdown` (made from src/base/settings.def) prints exactly
  the table of docs/settings.md: a setting added, changed or removed in
  one place and not the other fails here;
- `nbcx-info --settings` shows a setting given in the environment with
  its value and "(environment)", one of a pattern (NBCX_<COLL>_ALG) by
  its own name, and names an NBCX_ variable that is no setting as
  ignored (nbcx reads nothing from it: nbcx_setting_value, env.c).
"""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> int:
    info, root = sys.argv[1], sys.argv[2]
    errors: list[str] = []
    md = subprocess.run(
        [info, "--markdown"], check=True, capture_output=True, text=True
    )
    with open(os.path.join(root, "docs", "settings.md"), encoding="utf-8") as f:
        table = [line.rstrip("\n") for line in f if line.startswith("|")]
    made = md.stdout.splitlines()
    if made != table:
        for have, want in zip(table, made):
            if have != want:
                errors.append(
                    f"docs/settings.md has\n  {have}\nnbcx-info --markdown makes\n  {want}"
                )
                break
        else:
            errors.append(
                f"docs/settings.md has {len(table)} table lines, nbcx-info {len(made)}"
            )
    env = dict(os.environ)
    env.update(
        {
            "NBCX_SCHED_CACHE": "7",
            "NBCX_ALLREDUCE_ALG": "ring",
            "NBCX_SCHED_CACHEE": "3",  # misspelt: no setting
        }
    )
    out = subprocess.run(
        [info, "--settings"], check=True, capture_output=True, text=True, env=env
    ).stdout
    for want in (
        "NBCX_SCHED_CACHE           7  (environment)",
        "NBCX_ALLREDUCE_ALG         ring  (environment)",
        "  NBCX_SCHED_CACHEE=3",
        "NBCX_TIMEOUT               off  (default)",
    ):
        if want not in out:
            errors.append(f"nbcx-info --settings: no line with {want!r}")
    ignored = out.split("Ignored", 1)[-1] if "Ignored" in out else ""
    if "NBCX_SCHED_CACHEE=3" not in ignored or "NBCX_SCHED_CACHE=7" in ignored:
        errors.append(
            "nbcx-info --settings: the misspelt variable is not the one ignored"
        )
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
