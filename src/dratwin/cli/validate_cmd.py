"""`dratwin validate` (placeholder, being written)."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("validate", help="validate")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError("validate")
