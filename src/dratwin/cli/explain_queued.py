"""``dratwin explain workload/...`` and ``job/...``, and ``pod/...`` for the pods of a queued Job.

A Job that Kueue queues is suspended until its Workload is admitted, so its pods do not exist: a pod name
of the Job's pattern (``<job>-<suffix>``, ``<job>-<index>-<suffix>``) or ``job/NS/NAME`` is mapped to the
Workload, and the explanation says so.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from dratwin.allocator import Features
from dratwin.api.intake import Admitted, admit
from dratwin.api.loader import LoadedObject
from dratwin.cel import SelectorCompiler
from dratwin.cluster.load import LoadedCluster, load_cluster
from dratwin.errors import InputError
from dratwin.kueue.cycle import Admitted as AdmittedWorkload
from dratwin.twin.explain_workload import explain_workload
from dratwin.twin.kueue_state import KueueState, QueuedWorkload, kueue_state
from dratwin.twin.schedule import Options

NO_KUEUE = ("the input holds no Kueue ClusterQueue or LocalQueue, so no Workload is queued; add the "
            "kueue.x-k8s.io objects (ResourceFlavor, ClusterQueue, LocalQueue) with -f, or explain the pods "
            "with pod/NAMESPACE/NAME")


@dataclass
class QueuedInput:
    admitted: Admitted  # the input as read and converted
    state: KueueState | None  # None: no Kueue in this cluster


def queued_input(objects: Sequence[LoadedObject]) -> QueuedInput:
    admitted = admit(objects)
    return QueuedInput(admitted, kueue_state(admitted.objects))


def loaded_after_kueue(queues: QueuedInput, features: Features, seed: int) -> LoadedCluster:
    """The cluster with Kueue's decisions applied (the refusals and notes of reading kept)."""
    assert queues.state is not None
    loaded = load_cluster(queues.state.objects, features, random.Random(seed), admitted_already=True)
    loaded.rejections = queues.admitted.rejections() + loaded.rejections
    loaded.notes = list(queues.admitted.notes) + loaded.notes
    loaded.conversions = list(queues.admitted.notes)
    return loaded


def explain_queued(args: argparse.Namespace, kind: str, key: str, queues: QueuedInput, features: Features,
                   options: Options, compiler: SelectorCompiler, asked: str = "") -> int:
    state = queues.state
    if state is None:
        raise InputError(NO_KUEUE)
    if kind == "job":
        namespace, _, name = key.partition("/")
        queued = state.by_job(namespace, name)
        if queued is None:
            raise InputError(_unknown(state, "job", key, [w.owner.namespace + "/" + w.owner.name
                                                          for w in state.workloads.values()
                                                          if w.owner is not None and w.owner.kind == "Job"]))
        asked = asked or f"job {key}"
        key = queued.key
    elif key not in state.workloads:
        raise InputError(_unknown(state, "workload", key, list(state.workloads)))
    explanation = explain_workload(state, key, features, options, compiler, args.seed)
    explanation.asked_as = f"pod {asked}" if asked and "/" in asked and not asked.startswith("job ") else asked
    explanation.notes += queues.admitted.rejections() + list(queues.admitted.notes)
    if args.output == "json":
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print("\n".join(explanation.lines()))
    return 0 if explanation.status == "Admitted" else 1


def _unknown(state: KueueState, kind: str, key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    shown = ", ".join(sorted(known)[:10]) or "none"
    return f"{kind} {key} is not queued by Kueue in the input{hint} ({kind}s: {shown})"


def queued_pod(state: KueueState, key: str) -> QueuedWorkload | None:
    """The queued Job whose pods' names ``key`` has (the longest Job name that is a prefix of it)."""
    namespace, _, name = key.partition("/")
    owners = [w for w in state.workloads.values() if w.owner is not None and w.owner.kind == "Job"
              and (w.owner.namespace or "default") == namespace and name.startswith(w.owner.name + "-")]
    return max(owners, key=lambda w: len(w.owner.name) if w.owner is not None else 0, default=None)


def admitted_note(state: KueueState, key: str) -> list[str]:
    """For a pod of an admitted Job: which Workload admitted it, where."""
    queued = queued_pod(state, key)
    if queued is None or not isinstance(queued.verdict, AdmittedWorkload):
        return []
    how = "borrowing from its cohort" if queued.verdict.borrowing else "within its nominal quota"
    return [f"its {queued.owner_ref} was admitted by Kueue as workload {queued.key} in ClusterQueue "
            f"{queued.entry.cluster_queue} ({how}); `dratwin explain workload/{queued.key}` shows the quota"]
