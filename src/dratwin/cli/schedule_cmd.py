"""``dratwin schedule``: place every pending pod as kube-scheduler would, with DRA, and show the result."""

from __future__ import annotations

import argparse
import gc
import random
import sys

from dratwin.allocator import Features
from dratwin.cel import SelectorCompiler
from dratwin.cli.main import add_file_arguments, load_inputs
from dratwin.cluster.load import load_cluster
from dratwin.scheduler.scoring import DEFAULT_SCORING, SCORING_HELP, SCORING_NAMES, opt_in_note, scoring_named
from dratwin.twin.report import gated_pods, render_json_bytes, render_table, render_yaml
from dratwin.twin.schedule import Options, ScheduleReport, gc_paused, schedule

EPILOG = """\
examples:
  dratwin schedule -f examples/
      place every pending pod of examples/ (Pods, Deployments, Jobs, StatefulSets) on its nodes
  kubectl get nodes,resourceslices,deviceclasses,resourceclaims,pods -A -o yaml > cluster.yaml
  dratwin schedule -f cluster.yaml -f my-workload.yaml
      what a real cluster would do with a new workload
  dratwin schedule -f examples/ -o yaml
      every pod and claim as the API server would store them (spec.nodeName, status.allocation, ...)
  dratwin schedule -f cluster.yaml --feature-gates DRADeviceTaintRules=true
      with the taints of DeviceTaintRules on their devices (the gate is beta and off by default in 1.36)
  dratwin schedule -f examples/compute-domain/
      NVIDIA ComputeDomain pods on a P6e-GB200 UltraServer: an IMEX channel each, and their IMEX daemons
  dratwin trace import alibaba-v2023 tests/data/trace > trace.yaml && dratwin schedule -f trace.yaml --scoring FGD
      GPU-sharing pods placed by the FGD paper's policy (opt-in, noted in the result) instead of upstream's

The result is the cluster right after `kubectl apply`: no kubelet runs, so an OrderedReady StatefulSet has
only its first pod yet. NVIDIA ComputeDomains run as their controller runs them: its claim templates, and
the IMEX daemon pods on the nodes the workload pods land on (their readiness assumed, in a note). Kinds
dratwin does not model (MPIJob, JobSet, ...) are listed as warnings, never dropped silently.

Kueue: with a ClusterQueue or LocalQueue in the input, Jobs labelled kueue.x-k8s.io/queue-name are
suspended and get a Workload, which Kueue admits (quota per flavor, cohorts, borrowing) or leaves waiting
with its reason; admitted Jobs are unsuspended with their flavor's node labels and tolerations and their
pods scheduled. The table lists the Workloads with Kueue's print columns; -o yaml / -o json add them as
Kueue stores them (status.admission, conditions). Pods, Deployments and StatefulSets need Kueue's pod
integration, off in its default Configuration (they run unmanaged): with pod (and deployment, statefulset)
in the Configuration's integrations.frameworks, their pods are gated (kueue.x-k8s.io/admission) until their
Workloads are admitted. Pods with scheduling gates are listed as GATED, never tried.

input: objects are taken as the API server takes them (kubectl --validate=strict): one with an unknown
  field, a wrong type, a bad quantity or a missing required field is left out and named with its file,
  line and field (a WARNING), as kubectl apply -f DIR leaves it out; resource.k8s.io v1beta1/v1beta2
  objects are converted to v1 (a note each).

exit status: 0 every pod scheduled (and every Workload admitted), 1 some pod stays pending, a Workload
  waits, or an object or pod is refused, 2 bad input
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "schedule",
        help="schedule pending pods with kube-scheduler's default profile and DRA",
        description="Run the workload and resourceclaim controllers and kube-scheduler (1.36 default profile: "
        "node name, unschedulable, taints, node affinity, resources, dynamic resources) over the input, "
        "in queue order, and show where each pod lands and why the others stay Pending.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_cluster_arguments(parser)
    parser.add_argument("-o", "--output", choices=("table", "yaml", "json"), default="table")
    parser.set_defaults(handler=run)


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    add_file_arguments(parser)
    parser.add_argument("--feature-gates", default="", metavar="GATE=BOOL,...",
                        help="override the Kubernetes 1.36 defaults")
    parser.add_argument("--scoring", choices=SCORING_NAMES, default=DEFAULT_SCORING, metavar="NAME",
                        help=SCORING_HELP)
    parser.add_argument("--percentage-of-nodes-to-score", type=int, default=0, metavar="N",
                        help="0 (default) = kube-scheduler's adaptive percentage")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for generated names and for breaking ties between equal nodes")


def run_schedule(args: argparse.Namespace) -> tuple[ScheduleReport, SelectorCompiler]:
    features = Features.from_gates(args.feature_gates)
    compiler = SelectorCompiler(list_type_attributes=features.list_type_attributes)
    objects = load_inputs(args.paths, args.recursive, "schedule")
    gc.freeze()  # the objects live until the end: the collector need not walk them again
    loaded = load_cluster(objects, features, random.Random(args.seed), kueue=True)
    scoring = scoring_named(args.scoring)
    options = Options(args.seed, scoring.strategy, args.percentage_of_nodes_to_score, scoring.policy)
    note = opt_in_note(scoring)
    if note is not None:
        loaded.notes.append(note)
    return schedule(loaded, options, compiler), compiler


def write_bytes(data: bytes) -> None:
    """Write UTF-8 output to standard output as it is (no second copy as text), after anything printed."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode())
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


def run(args: argparse.Namespace) -> int:
    # One run's objects (pods, claims, the report) all live until it ends and hold no cycles worth
    # collecting: the collector would only walk them again and again (a quarter of the time at 5,000 pods).
    with gc_paused(keep=True):
        report, compiler = run_schedule(args)
        if args.output == "yaml":
            print(render_yaml(report), end="")
        elif args.output == "json":
            write_bytes(render_json_bytes(report, compiler))
        else:
            print(render_table(report, compiler), end="")
    args.built = report  # freed with the process when dratwin ends it (cli.main)
    everything_runs = not report.loaded.blocked and not report.loaded.rejections
    all_admitted = report.kueue is None or not any(w.waiting for w in report.kueue.workloads)
    everything_tried = not gated_pods(report.state)
    return 0 if everything_runs and everything_tried and all_admitted and all(a.scheduled for a in report.attempts) \
        else 1
