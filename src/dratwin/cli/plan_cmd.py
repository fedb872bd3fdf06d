"""``dratwin plan``: what Karpenter would launch for pending pods, what it costs, and what it cannot."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from dratwin.allocator import Features
from dratwin.catalog import load_catalog
from dratwin.cel import SelectorCompiler
from dratwin.cli.main import add_file_arguments, load_inputs
from dratwin.twin.plan import PlanOptions, plan
from dratwin.twin.plan_report import render_json, render_table, render_yaml

EPILOG = """\
examples:
  dratwin plan -f nodepools.yaml -f workload.yaml
      the nodes Karpenter would launch from scratch (scale from zero), per NodePool, with $/hour
  dratwin plan -f nodepools.yaml -f workload.yaml --existing cluster.yaml
      pods first go to the existing nodes (as kube-scheduler places them), Karpenter launches for the rest
  dratwin plan -f nodepools.yaml -f workload.yaml -o yaml
      the NodeClaims, Nodes and ResourceSlices they would bring, the bound pods and allocated claims
  dratwin plan -f nodepools.yaml -f workload.yaml --optimal
      also the cheapest fleet for the same pods (MILP) and Karpenter's cost over it

Karpenter is modelled with DRA support on (settings.enableDRA: the NVIDIA GPU and DRANET EFA drivers run
on launched nodes; instance types without Karpenter's device metadata, such as g7e, publish no devices).
Each provisioner manages only the NodePools of its NodeClass (karpenter.k8s.aws/EC2NodeClass, or
eks.amazonaws.com/NodeClass with --auto-mode) and reads requirements in its own labels (karpenter.k8s.aws/* or
eks.amazonaws.com/*): a key of the other set is a custom label that narrows no instance type (a note says so).
Prices: us-east-1 on-demand from the bundled catalog, or your own with --catalog (spot, discounts, regions).
Exit status: 0 every pod placed or provisioned, 1 some pod cannot be provisioned, 2 bad input.
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "plan",
        help="what Karpenter would launch for pending pods, what it costs, and why some cannot be provisioned",
        description="Schedule the input's pods on its existing nodes, then simulate Karpenter's provisioning "
        "for the rest over the input's NodePools and the AWS instance catalog.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_file_arguments(parser)
    parser.add_argument(
        "--existing",
        action="append",
        default=[],
        metavar="PATH",
        help="the existing cluster (Nodes, ResourceSlices, bound pods, claims); repeatable",
    )
    parser.add_argument(
        "--auto-mode",
        action="store_true",
        help="EKS Auto Mode instead of self-managed Karpenter: the NodePools of its NodeClass (eks.amazonaws.com), "
        "its eks.amazonaws.com/instance-* labels and supported instance types, built-in NVIDIA and EFA DRA drivers, "
        "each node's device-manager role chosen at launch from its pods and kept for life",
    )
    parser.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="PATH",
        help="a user catalog merged over the bundled one, in order: your prices (spot, discounts), region and "
        "zones, instance types, offerings out of capacity (format: dratwin/data/CATALOG.md); repeatable",
    )
    parser.add_argument(
        "--kubernetes-version",
        type=_minor_version,
        default=(1, 36),
        metavar="1.N",
        help="the cluster's Kubernetes version (default 1.36); EKS Auto Mode serves DRA claims only from 1.36",
    )
    parser.add_argument(
        "--now",
        type=_timestamp,
        default=None,
        metavar="RFC3339",
        help="the time disruption budget schedules and consolidateAfter are judged at "
        "(default: budgets active, consolidateAfter elapsed)",
    )
    parser.add_argument(
        "--optimal",
        action="store_true",
        help="also solve the cost-optimal fleet for the same pods (MILP with HiGHS) and report how far "
        "Karpenter's choice is from it; the plan itself stays Karpenter's",
    )
    parser.add_argument(
        "--optimal-time-limit",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="stop the MILP after this long and report the best fleet with its lower bound (default 30)",
    )
    parser.add_argument(
        "--feature-gates", default="", metavar="GATE=BOOL,...", help="kube-scheduler feature gates (DRA gates)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of generated names and scheduler tie-breaks")
    parser.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    parser.set_defaults(handler=run)


def _minor_version(text: str) -> tuple[int, int]:
    parts = text.removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise argparse.ArgumentTypeError(f"{text!r} is not a Kubernetes version such as 1.36")
    return int(parts[0]), int(parts[1])


def _timestamp(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not an RFC 3339 time, e.g. 2026-11-30T14:00:00Z") from error
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def run(args: argparse.Namespace) -> int:
    features = Features.from_gates(args.feature_gates)
    objects = load_inputs([*args.existing, *args.paths], args.recursive, "plan")
    report = plan(
        objects,
        features,
        PlanOptions(
            seed=args.seed,
            auto_mode=args.auto_mode,
            kubernetes_version=args.kubernetes_version,
            now=args.now,
            optimal_time_limit=args.optimal_time_limit if args.optimal else None,
        ),
        catalog=load_catalog(args.catalog),
        compiler=SelectorCompiler(list_type_attributes=features.list_type_attributes),
    )
    if args.output == "yaml":
        print(render_yaml(report), end="")
    elif args.output == "json":
        print(render_json(report), end="")
    else:
        print(render_table(report), end="")
    return 1 if report.plan.unplaced else 0
