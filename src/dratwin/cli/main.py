"""Entry point of the ``dratwin`` command: parse arguments, call one command module, map errors to exits.

Exit status: 0 success; 1 the input has problems (validate) or claims cannot be allocated (allocate);
2 bad usage, an unreadable file, an input without objects, an unknown kind or the allocator refused
its input (validate: only when nothing could be read at all; see its --help).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from dratwin import __version__
from dratwin.api.loader import LoadedObject
from dratwin.api.validation_formats import shorten_words
from dratwin.errors import DratwinError, InputError

EXIT_OK, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2

DESCRIPTION = """\
dratwin predicts what a Kubernetes 1.36 cluster with Dynamic Resource Allocation does with your
manifests, and explains why, without a cluster.

commands:
  validate   check manifests: schema, API limits, CEL selectors, dangling references
  allocate   run the DRA allocator for one node: which devices each claim gets, or why not
  schedule   place every pending pod like kube-scheduler, with DRA; say why the rest stays Pending
  explain    why one pod or claim is pending, from the scheduler's summary down to device values
  plan       what Karpenter would launch for pending pods, what it costs, what it cannot provision
  cluster    generate the Nodes and ResourceSlices of real EC2 instance types (cluster generate)
  bench      run the benchmarks and print the figures
  trace      import a GPU cluster trace as manifests, replay the FGD paper's placement protocol
"""


def add_file_arguments(parser: argparse.ArgumentParser, dest: str = "paths") -> None:
    """``-f PATH`` (repeatable) and ``-R``, as kubectl has them."""
    parser.add_argument(
        "-f", "--filename", dest=dest, action="append", required=True, metavar="PATH",
        help="YAML or JSON file, directory (its files; with -R also its subdirectories) or - for stdin; "
        "repeatable",
    )
    parser.add_argument("-R", "--recursive", action="store_true", help="read directories recursively")


def load_inputs(paths: Sequence[str], recursive: bool, command: str) -> list[LoadedObject]:
    """The objects of ``-f`` as ``kubectl apply -f`` applies them, for every command but validate.

    A directory's files that hold no manifests are skipped and a repeated object replaces the earlier
    one (both with a warning on standard error); a file that cannot be read, or an input without any
    object, is an InputError (exit status 2).
    """
    from dratwin.api.input_set import read_inputs

    inputs = read_inputs(paths, recursive)
    for note in inputs.notes:
        print(f"dratwin {command}: {shorten_words(str(note))}", file=sys.stderr)
    if inputs.empty:
        raise InputError(str(inputs.empty_note()))
    merged = inputs.merged()
    for replacement in merged.replacements:
        level = "error" if replacement.refused else "warning"
        where = f"{replacement.later.source.path}:{replacement.later.line_of(replacement.field)}"
        print(f"dratwin {command}: {where}: {level}: {shorten_words(replacement.ref)}: "
              f"{shorten_words(replacement.describe())}", file=sys.stderr)
    return merged.objects


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dratwin", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"dratwin {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _command_registrars():
        register(commands)
    return parser


def _command_registrars() -> list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]]:
    from dratwin.cli import (
        allocate_cmd,
        bench_cmd,
        cluster_cmd,
        explain_cmd,
        plan_cmd,
        schedule_cmd,
        trace_cmd,
        validate_cmd,
    )

    return [
        validate_cmd.register,
        allocate_cmd.register,
        schedule_cmd.register,
        explain_cmd.register,
        plan_cmd.register,
        cluster_cmd.register,
        bench_cmd.register,
        trace_cmd.register,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_ERROR
    try:
        return int(handler(args))
    except DratwinError as error:
        print(f"dratwin {args.command}: {shorten_words(str(error))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
