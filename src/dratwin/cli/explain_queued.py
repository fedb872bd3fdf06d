"""``dratwin explain workload/...`` and ``job/...``, and ``pod/...`` for the pods of a queued Job.

A Job that Kueue queues is suspended until its Workload is admitted, so its pods do not exist: a pod name
of the Job's pattern (``<job>-<suffix>``, ``<job>-<index>-<suffix>``) or ``job/NS/NAME`` is mapped to the
Workload, and the explanation says so.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Sequence

from dratwin.allocator import Features
from dratwin.api.intake import Admitted
from dratwin.cel import SelectorCompiler
from dratwin.errors import InputError
from dratwin.kueue.cycle import Admitted as AdmittedWorkload
from dratwin.twin.explain_workload import explain_workload
from dratwin.twin.kueue_state import KueueRun, QueuedWorkload, run_with_kueue
from dratwin.twin.schedule import Options

NO_KUEUE = ("the input holds no Kueue ClusterQueue or LocalQueue, so no Workload is queued; add the "
            "kueue.x-k8s.io objects (ResourceFlavor, ClusterQueue, LocalQueue) with -f, or explain the pods "
            "with pod/NAMESPACE/NAME")


def explain_queued(args: argparse.Namespace, kind: str, key: str, admitted: Admitted, features: Features,
                   options: Options, compiler: SelectorCompiler, run: KueueRun | None = None,
                   asked: str = "") -> int:
    """Explain the Workload ``key`` (``kind`` workload) or the Workload of the Job ``key`` (``kind`` job)."""
    def rerun(pod: str) -> KueueRun | None:
        return run_with_kueue(admitted.objects, features, options, compiler, until=pod)

    run = run or run_with_kueue(admitted.objects, features, options, compiler)
    if run is None:
        raise InputError(NO_KUEUE)
    if kind == "job":
        namespace, _, name = key.partition("/")
        queued = run.by_job(namespace, name)
        if queued is None:
            raise InputError(_unknown("job", key, [f"{w.job_namespace}/{w.job_name}" for w in run.workloads.values()]))
        asked = asked or f"job {key}"
        key = queued.key
    elif key not in run.workloads:
        raise InputError(_unknown("workload", key, list(run.workloads)))
    explanation = explain_workload(run, key, rerun)
    explanation.asked_as = asked
    explanation.notes += admitted.rejections() + list(admitted.notes)
    if args.output == "json":
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print("\n".join(explanation.lines()))
    return 0 if explanation.status == "Admitted" else 1


def _unknown(kind: str, key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    shown = ", ".join(sorted(known)[:10]) or "none"
    return f"{kind} {key} is not queued by Kueue in the input{hint} ({kind}s: {shown})"


def admitted_note(queued: QueuedWorkload | None) -> list[str]:
    """For a pod of an admitted Job: which Workload admitted it, where."""
    if queued is None or not isinstance(queued.verdict, AdmittedWorkload):
        return []
    how = "borrowing from its cohort" if queued.verdict.borrowing else "within its nominal quota"
    return [f"its {queued.owner_ref} was admitted by Kueue as workload {queued.key} in ClusterQueue "
            f"{queued.entry.cluster_queue} ({how}); `dratwin explain workload/{queued.key}` shows the quota"]
