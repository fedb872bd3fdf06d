"""``dratwin explain``: why a pod or a claim is pending, from kube-scheduler's summary down to devices."""

from __future__ import annotations

import argparse
import json
import random

from dratwin.allocator import Features
from dratwin.cel import SelectorCompiler
from dratwin.cli.explain_queued import admitted_note, explain_queued, loaded_after_kueue, queued_input, queued_pod
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
  dratwin explain workload/team-a/job-finetune-2abf7 -f cluster/ -f queues/
      with Kueue's objects in the input: the Workload's QuotaReserved condition in Kueue's words, the quota
      per flavor and resource ("needs 8 nvidia.com/gpu in flavor h100: 0 free of nominal 8, cohort research
      can lend 4, borrowingLimit 4: 4 short"), then its pods placed as if admitted, and the two mismatches:
      quota admits but no node can place the pods, nodes have room but quota blocks
  dratwin explain job/team-a/finetune -f cluster/ -f queues/
      the same for the Workload of a queued Job; pod/team-a/finetune-x7k2q works too (a suspended Job
      has no pods: the pod name is mapped to its Job's Workload)

The pod is explained in the state it met when kube-scheduler tried it (the run is repeated, with the
same seed, up to that pod). With Kueue's ClusterQueues and LocalQueues in the input, queued Jobs are
suspended until Kueue's scheduling cycles admit them (run to the end at time 0 over the input), and admitted
ones start with their flavors' nodeLabels and tolerations. Exit status: 0 scheduled, allocated or admitted
and placed, 1 pending, 2 bad input.
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "explain",
        help="why a pod, claim or Kueue Workload is pending: quota, then node -> claim -> request -> device",
        description="Explain the scheduling outcome of one pod or claim after running the controllers and "
        "kube-scheduler over the input (see `dratwin schedule`), or Kueue's admission of one Workload beside "
        "the placement of its pods.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="pod/NS/NAME|claim/NS/NAME|workload/NS/NAME|job/NS/NAME")
    from dratwin.cli.schedule_cmd import add_cluster_arguments

    add_cluster_arguments(parser)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    kind, key = _target(args.target)
    features = Features.from_gates(args.feature_gates)
    compiler = SelectorCompiler(list_type_attributes=features.list_type_attributes)
    scoring = scoring_named(args.scoring)
    options = Options(args.seed, scoring.strategy, args.percentage_of_nodes_to_score, scoring.policy)
    objects = load_inputs(args.paths, args.recursive, "explain")
    queues = queued_input(objects)
    if kind in ("workload", "job"):
        return explain_queued(args, kind, key, queues, features, options, compiler)
    if queues.state is None:
        loaded = load_cluster(objects, features, random.Random(args.seed))
    else:  # the cluster as Kueue leaves it: queued Jobs suspended until admitted
        loaded = loaded_after_kueue(queues, features, args.seed)
    known = {**loaded.state.pods, **dict.fromkeys(loaded.waiting)} if kind == "pod" else loaded.state.claims
    if kind == "pod" and key not in known and queues.state is not None:
        queued = queued_pod(queues.state, key)
        if queued is not None:
            return explain_queued(args, "workload", queued.key, queues, features, options, compiler, asked=key)
    if key not in known:
        refused = [r for r in loaded.rejections if f" {key}:" in r or f"/{key.split('/')[-1]}:" in r]
        why = "; it was refused: " + "; ".join(refused) if refused else ""
        raise InputError(f"{kind} {key} is not in the input (after running the controllers){why}; "
                         f"{kind}s: {', '.join(sorted(known)[:10]) or 'none'}")
    report = schedule(loaded, options, compiler, until=key if kind == "pod" else None)
    explanation: PodExplanation = explain_pod(report, key) if kind == "pod" else explain_claim(report, key)
    explanation.notes += loaded.rejections + loaded.conversions
    if kind == "pod" and queues.state is not None:
        explanation.notes += admitted_note(queues.state, key)
    if args.output == "json":
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print("\n".join(explanation.lines()))
    return 0 if explanation.status in ("Scheduled", "Allocated") else 1


def _target(text: str) -> tuple[str, str]:
    kind, _, rest = text.partition("/")
    kind = {"pods": "pod", "po": "pod", "resourceclaim": "claim", "resourceclaims": "claim"}.get(kind, kind)
    kind = {"workloads": "workload", "wl": "workload", "jobs": "job"}.get(kind, kind)
    if kind not in ("pod", "claim", "workload", "job") or not rest:
        raise InputError(f"{text!r}: name the target as pod/NAMESPACE/NAME, claim/NAMESPACE/NAME, "
                         "workload/NAMESPACE/NAME or job/NAMESPACE/NAME")
    namespace, _, name = rest.partition("/")
    return kind, f"{namespace}/{name}" if name else f"default/{namespace}"
