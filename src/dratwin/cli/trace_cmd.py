"""``dratwin trace``: GPU cluster traces: ``import`` them as manifests, ``replay`` the FGD paper's protocol."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from dratwin.errors import InputError

EXIT_OK, EXIT_ERROR = 0, 2

REPLAY_EPILOG = """\
The protocol of "Beware of Fragmentation" (Weng et al., USENIX ATC '23), as its simulator runs it: the
trace's pods are shuffled by the seed and tuned to 130% of the cluster's GPU capacity (sampled with
replacement), then arrive one by one and never leave. A policy scores the feasible nodes (ties go to the
first node of a seeded random order, as in the paper's simulator) and picks the GPUs. After every arrival
the allocated share of the cluster's GPUs is recorded; the figure is the unallocated GPU % at 100%
arrival (as the artifact's analysis_allo_discrete.csv reads it).

policies: random, dotprod, gpuclustering, gpupacking, bestfit, fgd (fragmentation gradient descent).

examples:
  dratwin trace replay data/alibaba-gpu-v2023/csv --policy fgd --seeds 42-51
      FGD on every workload of the folder, 10 seeds, beside ../fgd-expected-results/ when it exists
  dratwin trace replay DIR --workload default --policy all --seeds 42 -o json

exit status: 0 printed; 2 bad arguments or an unreadable trace.
"""

IMPORT_EPILOG = """\
DIR holds the trace's node list (openb_node_list_gpu_node.csv, or one *node_list*.csv) and pod lists
(openb_pod_list_<workload>.csv or *pod_list*.csv); --workload picks one when there are several.

With --gpu-manager dra (the default) each GPU node publishes a ResourceSlice of the NVIDIA GPU DRA driver
whose GPUs allow multiple allocations and have a consumable capacity "milli" of 1000 (DRAConsumableCapacity);
a GPU-sharing pod's claim asks for its gpu_milli of one GPU, a whole-GPU pod's for num_gpu GPUs (the policy
default: all 1000). gpu_spec becomes a CEL selector on the GPU model. With --gpu-manager device-plugin the
nodes advertise nvidia.com/gpu time-slicing replicas instead (--replicas per GPU), and pods ask for them.

examples:
  dratwin trace import alibaba-v2023 tests/data/trace > cluster.yaml && dratwin validate -f cluster.yaml
  dratwin trace import alibaba-v2023 DIR --workload gpushare40 --gpu-manager device-plugin -o json
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "trace",
        help="GPU cluster traces: import them as manifests, replay the FGD paper's protocol",
        description="Commands about recorded GPU cluster traces (the Alibaba GPU trace v2023 format).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subcommands = parser.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    _register_import(subcommands)
    _register_replay(subcommands)
    parser.set_defaults(handler=_usage(parser))


def _register_import(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from dratwin.trace.manifests import DEFAULT_REPLICAS, GPU_MANAGERS

    parser = subcommands.add_parser(
        "import",
        help="print a trace's nodes and pods as Nodes, ResourceSlices, claims and Pods",
        description="Print the nodes and pods of a trace as the manifests validate, schedule and explain read.",
        epilog=IMPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("format", choices=("alibaba-v2023",), help="the trace's format")
    parser.add_argument("dir", metavar="DIR", help="the trace folder")
    parser.add_argument("--workload", help="the pod list to import when the folder has several")
    parser.add_argument("--gpu-manager", choices=GPU_MANAGERS, default=GPU_MANAGERS[0],
                        help="who manages the GPUs: the DRA driver (consumable capacity) or the device plugin "
                        "(time-slicing); default dra")
    parser.add_argument("--replicas", type=int, default=DEFAULT_REPLICAS, metavar="N",
                        help=f"time-slicing replicas per GPU with the device plugin (default {DEFAULT_REPLICAS})")
    parser.add_argument("--namespace", default="default", help="the pods' namespace (default: default)")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="output format")
    parser.set_defaults(handler=run_import)


def _register_replay(subcommands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subcommands.add_parser(
        "replay",
        help="replay the FGD paper's protocol: unallocated GPU %% per policy, seed and workload",
        description="Replay a trace with the FGD paper's protocol and print the unallocated GPU % at 100% arrival.",
        epilog=REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dir", metavar="DIR", help="the trace folder")
    parser.add_argument("--policy", dest="policies", action="append", metavar="NAME",
                        help="a policy, or all (default); repeatable")
    parser.add_argument("--seeds", default="42-51", metavar="A-B|A,B,...", help="the seeds (default 42-51)")
    parser.add_argument("--workload", dest="workloads", action="append", metavar="NAME",
                        help="a workload of the folder (default: those with published results, or all); repeatable")
    parser.add_argument("--expected", metavar="DIR",
                        help="the folder with analysis_allo_discrete.csv (default: fgd-expected-results beside DIR)")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table", help="output format")
    parser.set_defaults(handler=run_replay)


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_ERROR

    return handler


def parse_seeds(text: str) -> list[int]:
    """``42-51`` or ``42,45,50`` (or a mix) as a list of seeds."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            seeds.extend(range(int(low), int(high or low) + 1))
    except ValueError:
        raise InputError(f"--seeds {text!r}: expected A-B or A,B,... of whole numbers, e.g. 42-51") from None
    if not seeds:
        raise InputError(f"--seeds {text!r}: no seed (a range A-B needs A <= B)")
    return seeds


def run_replay(args: argparse.Namespace) -> int:
    from dratwin.gpushare.policies import POLICY_NAMES
    from dratwin.trace.paper_table import find_expected, find_trace, read_published, run_table

    trace = find_trace(args.dir)
    seeds = parse_seeds(args.seeds)
    policies = _policies(args.policies, POLICY_NAMES)
    expected = find_expected(args.expected) if args.expected else find_expected(args.dir)
    if args.expected and expected is None:
        raise InputError(f"--expected {args.expected}: no analysis_allo_discrete.csv there")
    published = read_published(expected) if expected is not None else {}
    workloads = args.workloads or _default_workloads(trace.workloads, published)
    unknown = [w for w in workloads if w not in trace.workloads]
    if unknown:
        raise InputError(f"--workload {', '.join(unknown)}: not in {args.dir}; known: {', '.join(trace.workloads)}")
    progress = _progress if args.output == "table" and sys.stderr.isatty() else None
    cells = run_table(trace, workloads, policies, seeds, published, progress=progress)
    if args.output == "json":
        print(json.dumps(_json(cells, expected, seeds), indent=2))
    else:
        _print_table(cells, expected is not None)
    return EXIT_OK


def _policies(names: list[str] | None, known: tuple[str, ...]) -> list[str]:
    if not names or "all" in names:
        return list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"--policy {', '.join(unknown)}: unknown; known: {', '.join(known)} or all")
    return names


def _default_workloads(workloads: dict[str, Any], published: dict[tuple[str, str], Any]) -> list[str]:
    with_results = [w for w in workloads if any(key[0] == w for key in published)]
    return with_results or list(workloads)


def _progress(workload: str, policy: str, seed: int, value: float) -> None:
    print(f"\r{workload} {policy} seed {seed}: {value:.2f}%   ", end="", file=sys.stderr, flush=True)


def _json(cells: list[Any], expected: Any, seeds: list[int]) -> dict[str, Any]:
    return {
        "metric": "unallocated GPU % at 100% arrival",
        "seeds": seeds,
        "published": str(expected) if expected is not None else None,
        "results": [
            {
                "workload": c.workload, "policy": c.policy,
                "seeds": {str(s): v for s, v in sorted(c.ours.items())}, "mean": c.mean,
                "publishedSeeds": {str(s): v for s, v in sorted(c.published.items())},
                "publishedMean": c.published_mean, "difference": c.difference,
            }
            for c in cells
        ],
    }


def _print_table(cells: list[Any], with_published: bool) -> None:
    if sys.stderr.isatty():
        print(file=sys.stderr)
    head = f"{'WORKLOAD':<14}{'POLICY':<15}{'SEEDS':>6}{'MEAN':>8}"
    if with_published:
        head += f"{'PUBLISHED':>11}{'DIFF':>8}"
    print(head + "  PER SEED")
    for c in cells:
        line = f"{c.workload:<14}{c.policy:<15}{len(c.ours):>6}{_number(c.mean):>8}"
        if with_published:
            line += f"{_number(c.published_mean):>11}{_number(c.difference, signed=True):>8}"
        print(line + "  " + " ".join(f"{seed}:{value:.2f}" for seed, value in sorted(c.ours.items())))


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def run_import(args: argparse.Namespace) -> int:
    from dratwin.api.codec import write_list
    from dratwin.trace.manifests import ImportOptions, import_alibaba
    from dratwin.trace.paper_table import find_trace

    trace = find_trace(args.dir)
    if args.workload is None and len(trace.workloads) > 1:
        raise InputError(
            f"{args.dir}: {len(trace.workloads)} pod lists; choose one with --workload "
            f"({', '.join(trace.workloads)})"
        )
    workload = args.workload or next(iter(trace.workloads))
    if workload not in trace.workloads:
        raise InputError(f"--workload {workload}: not in {args.dir}; known: {', '.join(trace.workloads)}")
    if args.replicas < 1:
        raise InputError(f"--replicas {args.replicas}: must be at least 1")
    options = ImportOptions(args.gpu_manager, args.replicas, args.namespace)
    objects = import_alibaba(trace.nodes, trace.workloads[workload], options)
    write_list(objects, sys.stdout, args.output)
    return EXIT_OK


__all__ = ["parse_seeds", "register", "run_import", "run_replay"]
