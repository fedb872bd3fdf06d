"""``dratwin explain``: why a pod or a claim is pending, from kube-scheduler's summary down to devices."""

from __future__ import annotations

import argparse
import json
import random

from dratwin.allocator import Features
from dratwin.cel import SelectorCompiler
from dratwin.cli.main import load_inputs
from dratwin.cluster.load import load_cluster
from dratwin.errors import InputError
from dratwin.scheduler.scoring import scoring_named
from dratwin.twin.explain import PodExplanation, explain_claim, explain_pod
from dratwin.twin.schedule import Options, schedule

EPILOG = """\
examples:
  dratwin explain pod/ml/train-0 -f cluster/ -f workload.yaml
      why ml/train-0 is pending: "0/500 nodes are available: ...", then per group of nodes the claim,
      request, selector and device values that ruled them out
  dratwin explain claim/ml/train-0-gpu-x7k2q -f cluster/ -o json

The pod is explained in the state it met when kube-scheduler tried it (the run is repeated, with the
same seed, up to that pod). Exit status: 0 scheduled or allocated, 1 pending, 2 bad input.
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "explain",
        help="why a pod or claim is pending: node -> claim -> request -> selector -> device",
        description="Explain the scheduling outcome of one pod or claim after running the controllers and "
        "kube-scheduler over the input (see `dratwin schedule`).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="pod/NS/NAME|claim/NS/NAME")
    from dratwin.cli.schedule_cmd import add_cluster_arguments

    add_cluster_arguments(parser)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    kind, key = _target(args.target)
    features = Features.from_gates(args.feature_gates)
    compiler = SelectorCompiler(list_type_attributes=features.list_type_attributes)
    loaded = load_cluster(load_inputs(args.paths, args.recursive, "explain"), features, random.Random(args.seed))
    scoring = scoring_named(args.scoring)
    options = Options(args.seed, scoring.strategy, args.percentage_of_nodes_to_score, scoring.policy)
    known = {**loaded.state.pods, **dict.fromkeys(loaded.waiting)} if kind == "pod" else loaded.state.claims
    if key not in known:
        refused = [r for r in loaded.rejections if f" {key}:" in r or f"/{key.split('/')[-1]}:" in r]
        why = "; it was refused: " + "; ".join(refused) if refused else ""
        raise InputError(f"{kind} {key} is not in the input (after running the controllers){why}; "
                         f"{kind}s: {', '.join(sorted(known)[:10]) or 'none'}")
    report = schedule(loaded, options, compiler, until=key if kind == "pod" else None)
    explanation: PodExplanation = explain_pod(report, key) if kind == "pod" else explain_claim(report, key)
    explanation.notes += loaded.rejections + loaded.conversions
    if args.output == "json":
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print("\n".join(explanation.lines()))
    return 0 if explanation.status in ("Scheduled", "Allocated") else 1


def _target(text: str) -> tuple[str, str]:
    kind, _, rest = text.partition("/")
    kind = {"pods": "pod", "po": "pod", "resourceclaim": "claim", "resourceclaims": "claim"}.get(kind, kind)
    if kind not in ("pod", "claim") or not rest:
        raise InputError(f"{text!r}: name the target as pod/NAMESPACE/NAME or claim/NAMESPACE/NAME")
    namespace, _, name = rest.partition("/")
    return kind, f"{namespace}/{name}" if name else f"default/{namespace}"
