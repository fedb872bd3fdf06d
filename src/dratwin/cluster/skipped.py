"""The input objects the twin does not model, said once per kind so that nothing is dropped silently.

Which objects are skipped is :func:`dratwin.api.codec.classify`'s answer (``Support.NOT_CHECKED``, the
same that makes ``validate`` say "not checked"). Kinds known to change what a real cluster runs get a line
of their own saying what is missing from the twin's result (an MPIJob's pods, Kueue's admission); every
other skipped kind is listed in one line. Kueue's objects are read and validated (``dratwin validate``); where
no Kueue controller runs over the cluster (``load_cluster(kueue=False)``: ``explain``, ``plan``) they are
listed here too, as not applied; ``schedule`` and ``simulate`` run Kueue (:mod:`dratwin.sim.kueue`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dratwin.api.codec import Support, classify, split_api_version
from dratwin.api.loader import LoadedObject

MAX_NAMES = 3

_CREATE_PODS = "{their} pods are not created"
# (API group, kind) -> what is missing from the twin's result because the kind's controller does not run.
CONSEQUENCES: dict[tuple[str, str], str] = {
    **{("kubeflow.org", k): _CREATE_PODS
       for k in ("MPIJob", "PyTorchJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob", "Notebook")},
    ("trainer.kubeflow.org", "TrainJob"): _CREATE_PODS,
    ("ray.io", "RayCluster"): _CREATE_PODS,
    ("ray.io", "RayJob"): _CREATE_PODS,
    ("ray.io", "RayService"): _CREATE_PODS,
    ("jobset.x-k8s.io", "JobSet"): "{their} Jobs and pods are not created",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "{their} StatefulSets and pods are not created",
    ("batch.volcano.sh", "Job"): _CREATE_PODS,
    ("serving.kserve.io", "InferenceService"): "{their} Deployments and pods are not created",
    ("argoproj.io", "Workflow"): _CREATE_PODS,
}
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_GROUPS = (KUEUE_GROUP, "config.kueue.x-k8s.io")
KUEUE = (
    "quotas and admission are not applied: workloads that name a queue run as if admitted (a Job written with "
    "spec.suspend: true stays suspended)"
)


@dataclass(frozen=True)
class _Kind:
    api_version: str
    kind: str

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]


def skipped_objects(objects: Sequence[LoadedObject], handled: Collection[tuple[str, str]] = ()) -> list[str]:
    """One line per kind whose absence changes the result, then one line for the other skipped kinds.

    ``handled`` lists (API group, kind) pairs that classify calls not checked but that some part of the
    twin reads (PriorityClass, DeviceTaintRule, ...): they are not skipped."""
    by_kind: dict[_Kind, list[str]] = {}
    for obj in objects:
        kind = _Kind(obj.api_version, obj.kind)
        if (kind.group, kind.kind) in handled:
            continue
        if kind.group not in KUEUE_GROUPS and classify(obj).support is not Support.NOT_CHECKED:
            continue
        by_kind.setdefault(kind, []).append(_key(obj))
    lines, others = [], []
    for kind, names in by_kind.items():
        consequence = CONSEQUENCES.get((kind.group, kind.kind)) or (KUEUE if kind.group in KUEUE_GROUPS else "")
        if consequence:
            verb, their = ("is", "its") if len(names) == 1 else ("are", "their")
            what = consequence.format(their=their)
            state = "validated, not applied" if kind.group in KUEUE_GROUPS else "not modelled"
            lines.append(f"{kind.kind} {_names(names)} ({kind.api_version}) {verb} {state}: {what}")
        else:
            others.append(f"{kind.kind} {_names(names)} ({kind.api_version})")
    if others:
        lines.append(f"skipped, not modelled by dratwin: {'; '.join(others)}")
    return lines


def _key(obj: LoadedObject) -> str:
    name = obj.name or "<unnamed>"
    return f"{obj.namespace}/{name}" if obj.namespace else name


def _names(names: list[str]) -> str:
    more = len(names) - MAX_NAMES
    return ", ".join(names[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
