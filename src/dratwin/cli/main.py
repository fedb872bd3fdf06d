"""Entry point of the ``dratwin`` command: parse arguments, call one command module, map errors to exits.

Exit status: 0 success; 1 the input has problems (validate) or claims cannot be allocated (allocate);
2 bad usage, an unreadable file, an input without objects, an unknown kind or the allocator refused
its input (validate: only when nothing could be read at all; see its --help).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

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
  simulate   run the cluster through time: GPU-hours allocated and idle, waiting, cost
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


Registrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]

# Command name -> its module under dratwin.cli. Only the module of the command being run is imported: each
# pulls in its own layers (the allocator's explanations, the provisioner, the catalog...), and importing
# them all took a third of a second of every run.
COMMAND_MODULES = {
    "validate": "validate_cmd",
    "allocate": "allocate_cmd",
    "schedule": "schedule_cmd",
    "explain": "explain_cmd",
    "plan": "plan_cmd",
    "simulate": "simulate_cmd",
    "cluster": "cluster_cmd",
    "trace": "trace_cmd",
    "bench": "bench_cmd",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``command`` names one) a parser that knows only that command."""
    parser = argparse.ArgumentParser(
        prog="dratwin", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"dratwin {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in _command_registrars(command):
        register(commands)
    return parser


def _command_registrars(command: str | None = None) -> list[Registrar]:
    names = [command] if command in COMMAND_MODULES else list(COMMAND_MODULES)
    registrars = []
    for name in names:
        register: Registrar = importlib.import_module(f"dratwin.cli.{COMMAND_MODULES[name]}").register
        registrars.append(register)
    return registrars


def main(argv: Sequence[str] | None = None, *, end_process: bool = False) -> int:
    """Run one command and return its exit status. With ``end_process`` (the ``dratwin`` program) the process
    ends right after it instead, once its output is flushed, leaving what the command built (kept on
    ``args.built``) to the operating system: freeing millions of objects one by one took a tenth of a
    second after scheduling 5,000 pods. mypy ends the same way."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(arguments[0] if arguments else None)
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        code = EXIT_ERROR
    else:
        code = _run(handler, args)
    if end_process:
        _end_process(code)
    return code


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return int(handler(args))
    except DratwinError as error:
        print(f"dratwin {args.command}: {shorten_words(str(error))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


def _end_process(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing more can be written
            stream.flush()
    os._exit(code)


def console() -> int:
    """The ``dratwin`` program (it ends the process itself: see :func:`main`)."""
    return main(end_process=True)


if __name__ == "__main__":
    sys.exit(console())
