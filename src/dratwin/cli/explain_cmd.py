"""``dratwin explain``: why a pod or a claim is pending, from kube-scheduler's summary down to devices."""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Collection, Sequence

from dratwin.allocator import Features
from dratwin.api.intake import Admitted, admit
from dratwin.cel import SelectorCompiler
from dratwin.cli.explain_queued import admitted_note, explain_queued
from dratwin.cli.main import load_inputs
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.errors import InputError
from dratwin.scheduler.scoring import scoring_named
from dratwin.twin.explain import PodExplanation, explain_claim, explain_pod
from dratwin.twin.kueue_state import run_with_kueue
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
same seed, up to that pod). With Kueue's ClusterQueues and LocalQueues in the input, the run is the one
`dratwin schedule` makes: queued Jobs are suspended until Kueue's scheduling cycles admit them (at time 0,
until the queues settle), and admitted ones start with their flavors' nodeLabels and tolerations. Exit
status: 0 scheduled, allocated or admitted and placed, 1 pending, 2 bad input.
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
    if kind in ("workload", "job"):
        return explain_queued(args, kind, key, admit(objects), features, options, compiler)
    loaded = load_cluster(objects, features, random.Random(args.seed), kueue=True)
    known = {**loaded.state.pods, **dict.fromkeys(loaded.waiting)} if kind == "pod" else loaded.state.claims
    if kind == "pod" and key not in known and loaded.queued_jobs:
        # a queued Job's pods exist only once Kueue admits it, during the run
        return _queued_job_pod(args, key, admit(objects), loaded, features, options, compiler)
    if key not in known:
        raise InputError(_not_in_input(kind, key, known, loaded.rejections))
    report = schedule(loaded, options, compiler, until=key if kind == "pod" else None)
    explanation: PodExplanation = explain_pod(report, key) if kind == "pod" else explain_claim(report, key)
    return _print(args, explanation, loaded)


def _queued_job_pod(args: argparse.Namespace, key: str, admitted: Admitted, loaded: LoadedCluster,
                    features: Features, options: Options, compiler: SelectorCompiler) -> int:
    """A pod named as a queued Job's: the pod itself once Kueue admitted the Job, else its Workload."""
    found = run_with_kueue(admitted.objects, features, options, compiler)
    queued = found.by_pod(key) if found is not None else None
    if found is None or queued is None:
        raise InputError(_not_in_input("pod", key, loaded.state.pods, loaded.rejections))
    if key not in found.loaded.state.pods:
        return explain_queued(args, "workload", queued.key, admitted, features, options, compiler, run=found,
                              asked=f"pod {key}")
    again = run_with_kueue(admitted.objects, features, options, compiler, until=key)
    assert again is not None
    explanation = explain_pod(again.report(), key)
    explanation.notes += admitted_note(queued)
    return _print(args, explanation, loaded)


def _not_in_input(kind: str, key: str, known: Collection[str], rejections: Sequence[str]) -> str:
    refused = [r for r in rejections if f" {key}:" in r or f"/{key.split('/')[-1]}:" in r]
    why = "; it was refused: " + "; ".join(refused) if refused else ""
    return (f"{kind} {key} is not in the input (after running the controllers){why}; "
            f"{kind}s: {', '.join(sorted(known)[:10]) or 'none'}")


def _print(args: argparse.Namespace, explanation: PodExplanation, loaded: LoadedCluster) -> int:
    explanation.notes += loaded.rejections + loaded.conversions
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
