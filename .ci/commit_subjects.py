"""Commit subjects are one line of at most 72 characters, with the detail in the body.

Checks the commits made since the lint gates arrived (older history is left as it was
written). Run by `make lint`; prints each offending commit and exits 1.
"""

from __future__ import annotations

import subprocess
import sys

SINCE = "59238ba1e34947dad6f37c7adceab7d7f3c4aea1"  # style: format the tree with ruff ...
LIMIT = 72


def main() -> int:
    known = subprocess.run(["git", "cat-file", "-e", f"{SINCE}^{{commit}}"], capture_output=True)
    if known.returncode != 0:  # a shallow clone without the gate's commit: nothing to compare with
        print("commit subjects: history before HEAD not available; skipped")
        return 0
    log = subprocess.run(
        ["git", "log", "--format=%h%x00%s", f"{SINCE}..HEAD"], capture_output=True, text=True, check=True
    ).stdout
    bad = [line.split("\0", 1) for line in log.splitlines() if len(line.split("\0", 1)[1]) > LIMIT]
    for sha, subject in bad:
        print(f"{sha}: subject is {len(subject)} characters (at most {LIMIT}): {subject[:LIMIT]}...")
    if bad:
        print("Reword them (git rebase -i, reword): one line of at most 72 characters, the detail in the body.")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
