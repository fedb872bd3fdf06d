"""``dratwin simulate``: run the cluster through time and report what happened."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import msgspec

from dratwin.cli.main import load_inputs
from dratwin.errors import InputError
from dratwin.scheduler.scoring import SCORING_HELP, SCORING_NAMES

if TYPE_CHECKING:
    from dratwin.sim.outcomes import RunResult
    from dratwin.sim.store import Change

EPILOG = """\
scenario form: SCENARIO is a kind: Scenario file (examples/simulate/README.md). Every variant runs with
every seed (--seed N runs only seed N), in parallel processes (--jobs); the variants are printed side by
side, means over the seeds. Exit status 2 with every problem of the file (file:line, field, hint).

  dratwin simulate examples/simulate/eks-gpu-fleet.yaml --until 12h --report report.html
      the variants compared, and a page with GPU allocation, queue, nodes and cost over time
  dratwin simulate scenario.yaml --metrics sim.prom --table sim.parquet
      the cluster's series every 5 simulated minutes as OpenMetrics (promtool backfills it) and a table

sweep form: SCENARIO is a kind: Sweep file: a base scenario (a file, or the document inline) and axes, lists
of values for what variants override; every combination runs with every seed, and the comparison has a
column per axis and the means by each axis's values.

    spec:
      scenario: eks-gpu-fleet.yaml   # relative to the sweep file
      seeds: [1, 2]
      axes:                          # any of these; left out: as the scenario says
        variant: [dra, dra-mig]      # the scenario's own variants (default: all of them)
        gpuManager: [dra, device-plugin]
        sharing: [whole, {mig: [3g.20gb=2], instanceTypes: [p4d.24xlarge]}]
        scoring: [LeastAllocated, MostAllocated]
        fleet:                       # one value: every run has it
        - {name: small, generate: [{instanceType: p5.48xlarge}, {instanceType: p4d.24xlarge}]}
        autoscalerTarget: [50, 70]   # percent, every service's autoscaler
        autoscalerMetric: [DCGM_FI_DEV_GPU_UTIL, cpu]
        arrivalRateScale: [1, 2]     # times the Poisson and diurnal arrival rates

  dratwin simulate examples/simulate/sweep.yaml --until 12h --jobs 4
      16 runs in four processes of this machine
  dratwin simulate sweep.yaml --executor ray --address ray://head:10001 --report sweep.html
      the runs as tasks of an existing Ray cluster (pip install 'dratwin[ray]'; its nodes need the same
      dratwin); --address auto: the cluster `ray start` runs here; none: RAY_ADDRESS, else a Ray started here

bare form: SCENARIO is a file or directory of ordinary manifests.
  Cluster objects (Nodes, ResourceSlices, DeviceClasses, claims, templates) exist at time 0; each workload
  (Pod, Job, Deployment, ...) arrives at its annotation dratwin.io/arrive-at (default 0s) and each of its
  pods runs for dratwin.io/run-for once started (default: until the end; a Deployment's pods always do).

    metadata:
      annotations:
        dratwin.io/arrive-at: 30s
        dratwin.io/run-for: 10m

examples:
  dratwin simulate cluster/ --until 7d
      a week: GPU-hours allocated and idle, waiting times, pods never placed and why, cost
  dratwin simulate cluster/ -o json --events events.jsonl
      the outcomes for machines, and every change of the cluster (one JSON object a line)

What runs: the workload controllers (Jobs one pod per completion as earlier ones succeed), the
resourceclaim controller, kube-scheduler with its queue (backoff 1 s to 10 s, the unschedulable pool
moved on cluster events and after 5 min), a kubelet (pods run, then succeed), and with NodePools
Karpenter (batching window 1 s idle / 10 s max, nodes Ready with their devices after the launch latency;
disruption every 10 s: empty, drifted and underused nodes deleted or replaced by a cheaper node within the
NodePools' budgets and consolidateAfter, pods evicted back to their Jobs and Deployments, pods annotated
karpenter.sh/do-not-disrupt left alone). A Job annotated dratwin.io/gang: "true" is scheduled
all or nothing. Same input and seed, same output, byte for byte.

exit status: 0 every pod was placed, 1 some pod never was, 2 bad input
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "simulate",
        help="run the cluster through simulated time: GPU-hours, waiting, cost",
        description="Run the control plane (workload and claim controllers, kube-scheduler with DRA, a "
        "kubelet) over simulated time and report GPU-hours allocated and idle, waiting and start-up times, "
        "the pods never placed by reason, nodes over time and their cost.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenario", metavar="SCENARIO",
                        help="a kind: Scenario or kind: Sweep file, or a file or directory of manifests (the bare "
                        "form)")
    parser.add_argument("-R", "--recursive", action="store_true", help="read directories recursively")
    parser.add_argument("--until", default=None, metavar="DURATION",
                        help="how long to simulate (default: the scenario's duration; bare form: 1d, or up to "
                        "the last arrival); e.g. 7d, 12h")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed for arrivals, names and ties between equal nodes (default: the scenario's seeds; "
                        "bare form: 0)")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.add_argument("--events", metavar="FILE", default=None,
                        help="write every change of the cluster as JSON lines to FILE")
    parser.add_argument("--provisioner", choices=("none", "karpenter", "auto-mode"), default=None,
                        help="who launches nodes (default: karpenter when the input has a Karpenter NodePool, "
                        "else none: a static fleet)")
    parser.add_argument("-j", "--jobs", type=_positive, default=None, metavar="N",
                        help="runs of a scenario at once, in processes (default: the CPU count); same results")
    parser.add_argument("--executor", choices=("processes", "ray"), default="processes",
                        help="where the runs of a scenario or sweep run: processes of this machine, or Ray "
                        "(pip install 'dratwin[ray]'); same results")
    parser.add_argument("--address", default=None, metavar="ADDRESS",
                        help="with --executor ray: ray://HOST:10001 (a cluster's Ray Client), auto (the cluster "
                        "of this machine) or local (a Ray started here); default: RAY_ADDRESS, else a Ray here")
    parser.add_argument("--report", metavar="FILE.html", default=None,
                        help="write one self-contained HTML page (plots over time, the variants compared)")
    parser.add_argument("--metrics", metavar="FILE.prom", default=None,
                        help="write the series, sampled every 5 simulated minutes, as OpenMetrics text")
    parser.add_argument("--table", metavar="FILE.csv|FILE.parquet", default=None,
                        help="write the same series as a table, a row per sample (Parquet needs pyarrow)")
    parser.add_argument("--workloads", action="store_true",
                        help="with Kueue: list every Workload at the end with kubectl's columns (NAMESPACE NAME QUEUE "
                        "RESERVED IN ADMITTED FINISHED AGE); a scenario: the first seed of each variant (-o json "
                        "always has them)")
    parser.add_argument("--feature-gates", default="", metavar="GATE=BOOL,...",
                        help="override the Kubernetes 1.36 defaults")
    parser.add_argument("--scoring", choices=SCORING_NAMES, default=None, metavar="NAME",
                        help=f"bare form: {SCORING_HELP}; a scenario sets spec.scoring or a variant's "
                        "overrides.scoring instead")
    parser.set_defaults(handler=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of processes, 1 or more")
    return value


def run(args: argparse.Namespace) -> int:
    from dratwin.api.intake import admit
    from dratwin.catalog import load_catalog
    from dratwin.cli.simulate_scenario import has_kind, is_scenario_file, run_scenario, write_files, written_lines
    from dratwin.sim.batch import RunOutput
    from dratwin.sim.quick_scenario import DurationError, parse_duration, run_spec
    from dratwin.sim.run import SimOptions, simulate

    try:
        until = parse_duration(args.until) if args.until is not None else None
    except DurationError as error:
        raise InputError(f"--until: {error}") from None
    if has_kind(args.scenario, "Sweep"):
        from dratwin.cli.simulate_sweep import run_sweep

        return run_sweep(args, until)
    if is_scenario_file(args.scenario):
        if args.scoring is not None:
            raise InputError(f"--scoring {args.scoring}: a scenario's scoring is its spec.scoring, or a variant's "
                             "overrides.scoring (to compare both, add a variant); --scoring is for the bare form")
        return run_scenario(args, until)
    if args.executor != "processes" or args.address is not None:
        raise InputError(f"--executor/--address: {args.scenario} is one run of manifests; runs go to Ray for a "
                         "kind: Scenario or kind: Sweep file")
    # As the API server takes them (and schedule does): a malformed object is refused with its errors,
    # older API versions are read as v1, before the workloads are told from the cluster.
    admitted = admit(load_inputs([args.scenario], args.recursive, "simulate"))
    refused = admitted.rejections()
    seed = 0 if args.seed is None else args.seed
    spec = run_spec(admitted.objects, name=args.scenario, seed=seed, until_seconds=until,
                    provisioner=args.provisioner, admitted=True)
    if args.scoring is not None:
        spec = dataclasses.replace(spec, scoring=args.scoring)
    progress = _Progress(sys.stderr, spec.until_seconds) if sys.stderr.isatty() else None
    options = SimOptions(gates=args.feature_gates, catalog=load_catalog(), keep_events=args.events is not None,
                         progress=progress, sample_every=300.0)
    simulation = simulate(spec, options)
    if progress is not None:
        progress.done()
    if args.events is not None:
        _write_events(args.events, simulation.events)
    result = simulation.result
    result.notes = [*refused, *admitted.notes, *result.notes]  # admitted.notes: the objects read as v1
    written = write_files(args, args.scenario, [RunOutput(result, simulation.timeline)])
    if args.output == "json":
        sys.stdout.write(render_json(result))
    else:
        sys.stdout.write(render_table(result, workloads=args.workloads))
    for line in written_lines(written):
        print(line, file=sys.stderr if args.output == "json" else sys.stdout)
    return 1 if result.pods_pending_at_end or refused else 0


def render_json(result: RunResult) -> str:
    return msgspec.json.format(msgspec.json.encode(result), indent=2).decode() + "\n"


def _write_events(path: str, events: list[Change]) -> None:
    lines = []
    for change in events:
        record: dict[str, object] = {"t": change.time, "type": change.type, "kind": change.kind, "key": change.key}
        if change.message:
            record["message"] = change.message
        lines.append(msgspec.json.encode(record).decode())
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + ("\n" if lines else ""))
    except OSError as error:
        raise InputError(f"--events {path}: cannot write: {error.strerror}; choose a writable path") from None


def render_table(result: RunResult, *, workloads: bool = False) -> str:
    hours = result.until_seconds / 3600
    lines = [
        f"simulated {format_duration(result.until_seconds)} ({hours:g} h) of {result.scenario}, seed {result.seed}: "
        f"{result.events} events, {result.scheduling_attempts} scheduling attempts",
        f"pods: {result.pods_created} created, {result.pods_started} started, {result.pods_succeeded} succeeded, "
        f"{result.pods_running_at_end} running and {result.pods_pending_at_end} pending at the end",
        f"GPU-hours: {result.gpu_hours_allocated:.2f} allocated, {result.gpu_hours_used:.2f} used, "
        f"{result.gpu_hours_idle:.2f} idle",
    ]
    if result.fragmentation is not None:
        frag = result.fragmentation
        lines.append(f"fragmentation (FGD): {100 * frag.mean_share:.1f}% of the free GPUs on average "
                     f"({frag.mean_gpus:.2f} GPUs), at most {100 * frag.max_share:.1f}%")
    for name, dist in (("waiting (created -> bound)", result.waiting_seconds),
                       ("start-up (bound -> running)", result.startup_seconds)):
        if dist.count:
            lines.append(f"{name}: p50 {format_duration(dist.p50)}, p95 {format_duration(dist.p95)}, "
                         f"p99 {format_duration(dist.p99)}, max {format_duration(dist.max)} over {dist.count} pods")
    if result.device_hours:
        lines.append("")
        lines.append(f"{'DRIVER':<28} {'DEVICES':>8} {'ALLOCATED h':>12} {'IDLE h':>12}")
        lines += [f"{d.driver:<28} {d.devices:>8} {d.allocated:>12.2f} {d.idle:>12.2f}" for d in result.device_hours]
    lines.append("")
    lines.append(f"cost: {result.cost_usd:.2f} USD")
    for cost in result.cost_by_instance_type:
        price = "no price in the catalog" if cost.usd_per_hour is None else f"{cost.usd_per_hour:g} USD/h"
        lines.append(f"  {cost.instance_type} ({cost.capacity_type}): {cost.nodes} node(s), {cost.hours:.2f} "
                     f"node-hours, {price}")
    disruptions = result.disruptions
    if disruptions.commands or disruptions.commands_invalidated:
        lines.append(f"disrupted by Karpenter: {disruptions.nodes_empty} empty, {disruptions.nodes_underutilized} "
                     f"underutilized, {disruptions.nodes_drifted} drifted node(s); {disruptions.replacements_launched} "
                     f"replacement(s) launched; {disruptions.pods_evicted} pod(s) evicted, "
                     f"{format_duration(disruptions.work_lost_seconds)} of their run time lost")
    lines += _queue_lines(result, workloads)
    if result.never_placed:
        lines.append("")
        lines.append("never placed:")
        for group in result.never_placed:
            shown = ", ".join(group.pods) + (" ..." if group.count > len(group.pods) else "")
            lines.append(f"  {group.count} pod(s) ({shown}): {group.reason}")
    for note in result.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _queue_lines(result: RunResult, workloads: bool) -> list[str]:
    from dratwin.cli.simulate_queues import queue_lines, workload_lines
    from dratwin.sim.compare import compare

    if result.kueue is None:
        return []
    lines = queue_lines([("", q) for q in compare([result])[0].queues], format_duration, variants=False)
    if workloads:
        lines += ["", *workload_lines(result.kueue)]
    return lines


def format_duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:g}s"
    if seconds < 3600:
        return f"{seconds / 60:.1f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


class _Progress:
    """One status line on a terminal: simulated time reached and events per second."""

    def __init__(self, out: TextIO, until: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.until, self.clock = out, until, clock
        self.started = clock()

    def __call__(self, now: float, events: int) -> None:
        elapsed = max(self.clock() - self.started, 1e-9)
        share = 100 * now / self.until if self.until else 100.0
        self.out.write(f"\rsimulated {format_duration(now)} of {format_duration(self.until)} ({share:.0f}%), "
                       f"{events / elapsed:,.0f} events/s ")
        self.out.flush()

    def done(self) -> None:
        self.out.write("\r\033[K")
        self.out.flush()
