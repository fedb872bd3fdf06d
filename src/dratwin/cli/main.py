"""Entry point of the ``dratwin`` command."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    del argv
    print("dratwin: not yet wired", file=sys.stderr)
    return 2
