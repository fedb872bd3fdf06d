"""Rendering a schedule: the table for people, the objects as the API server stores them, JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.allocator.pools import gather_pools
from dratwin.allocator.state import DeviceID
from dratwin.api.codec import dump_json_bytes, dump_yaml
from dratwin.api.efa_sharing import shared_efa_warnings
from dratwin.api.resource import Device
from dratwin.cel import CelDevice, SelectorCompiler
from dratwin.cel.classes import classes_selecting
from dratwin.cluster.roles import time_slicing_warning
from dratwin.cluster.state import ClusterState
from dratwin.scheduler.gates import pre_enqueue_message, scheduling_gates
from dratwin.twin.report_kueue import (
    HEADER,
    cluster_queue_json,
    waiting_lines,
    workload_json,
    workload_objects,
    workload_rows,
)
from dratwin.twin.schedule import ScheduleReport

RUN_TIME = 0.0  # a one-shot run is the cluster at time 0: every Workload's age is 0s


@dataclass(frozen=True)
class ClassUsage:
    node: str
    device_class: str
    used: int
    total: int


def objects(report: ScheduleReport) -> list[dict[str, Any]]:
    """Every pod and claim as the API server would store it after this run, pods first, then Kueue's Workloads."""
    state = report.state
    return [r.raw for r in state.pods.values()] + [r.raw for r in state.claims.values()] + \
        list(workload_objects(report.kueue, state.workloads))


def render_yaml(report: ScheduleReport) -> str:
    return dump_yaml(objects(report))


def render_json(report: ScheduleReport, compiler: SelectorCompiler) -> str:
    return render_json_bytes(report, compiler).decode()


def render_json_bytes(report: ScheduleReport, compiler: SelectorCompiler) -> bytes:
    """The JSON report as UTF-8 (tens of MB for thousands of pods: written out as it is)."""
    body = summary(report, compiler)
    body["objects"] = objects(report)
    return dump_json_bytes([body])


def summary(report: ScheduleReport, compiler: SelectorCompiler) -> dict[str, Any]:
    state = report.state
    scheduled = [a for a in report.attempts if a.scheduled]
    return {
        "apiVersion": "dratwin/v1",
        "kind": "ScheduleReport",
        "scheduled": [{"pod": a.pod, "node": a.node, "devices": report.devices_of(a)} for a in scheduled],
        "unschedulable": [
            {"pod": a.pod, "message": a.message, "error": a.error or None} for a in report.attempts if not a.scheduled
        ],
        "nodes": [
            {"node": u.node, "deviceClass": u.device_class, "used": u.used, "total": u.total}
            for u in class_usage(state, compiler)
        ],
        **({"gated": [{"pod": pod, "gates": gates} for pod, gates in gated]} if (gated := gated_pods(state)) else {}),
        "notPending": [{"pod": b.pod, "reason": b.reason, "scheduler": b.scheduler_status or None}
                       for b in report.loaded.blocked],
        "warnings": warnings(report),
        "notes": report.loaded.notes,
    } | ({} if report.kueue is None else {
        "workloads": workload_json(report.kueue, state.workloads, RUN_TIME),
        "clusterQueues": cluster_queue_json(report.kueue),
    })


def render_table(report: ScheduleReport, compiler: SelectorCompiler) -> str:
    state = report.state
    attempts = report.attempts
    scheduled = [a for a in attempts if a.scheduled]
    lines = [f"{len(scheduled)} of {len(attempts)} pending pod(s) scheduled on {len(state.nodes)} node(s)", ""]
    if scheduled:
        rows: list[tuple[str, ...]] = [("POD", "NODE", "DEVICES")]
        for attempt in scheduled:
            devices = report.devices_of(attempt) + _plugin_devices(state, attempt.pod)
            first = devices[0] if devices else "-"
            rows.append((attempt.pod, attempt.node or "", first))
            rows.extend(("", "", more) for more in devices[1:])
        lines += [*_columns(rows), ""]
    if report.kueue is not None:
        lines += _workload_lines(report)
    failed = [a for a in attempts if not a.scheduled]
    if failed:
        lines.append(f"UNSCHEDULABLE ({len(failed)})")
        lines += [f"{a.pod}: {a.message}" for a in failed] + [""]
    gated = gated_pods(state)
    if gated:
        lines.append(f"GATED: not tried until their scheduling gates are removed ({len(gated)})")
        lines += [f"{pod}: {pre_enqueue_message(gates)}" for pod, gates in gated] + [""]
    blocked = report.loaded.blocked
    if blocked:
        lines.append(f"NOT TRIED: held back before scheduling until their claims exist ({len(blocked)})")
        lines += [f"{b.pod}: {b.reason}" for b in blocked] + [""]
    usage = class_usage(state, compiler)
    if usage:
        table: list[tuple[str, ...]] = [("NODE", "DEVICE CLASS", "USED", "TOTAL")]
        table += [(u.node, u.device_class, str(u.used), str(u.total)) for u in usage]
        lines += [*_columns(table), ""]
    for warning in warnings(report):
        lines.append(f"WARNING: {warning}")
    for note in report.loaded.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines).rstrip() + "\n"


def _workload_lines(report: ScheduleReport) -> list[str]:
    assert report.kueue is not None
    rows = workload_rows(report.kueue, report.state.workloads, RUN_TIME)
    admitted = sum(1 for w in report.kueue.workloads if w.admitted_at is not None)
    lines = [f"{admitted} of {len(rows)} Kueue workload(s) admitted", ""]
    if rows:
        lines += [*_columns([HEADER, *rows]), ""]
    waiting = waiting_lines(report.kueue)
    if waiting:
        lines.append(f"WAITING FOR ADMISSION ({len(waiting)})")
        lines += [*waiting, ""]
    return lines


def gated_pods(state: ClusterState) -> list[tuple[str, list[str]]]:
    """The unbound pods kube-scheduler does not try for their scheduling gates, and the gates, in order."""
    return [(key, gates) for key, record in state.pods.items()
            if not record.pod.spec.node_name and (gates := scheduling_gates(record.raw))]


def warnings(report: ScheduleReport) -> list[str]:
    """What a platform engineer must act on: devices handed out twice, EFAs a sharing pod may not get, pods
    admission refused."""
    found = [role.warning() for role in report.loaded.roles if role.warning()]
    for info in report.state.nodes.values():
        gpu_pods = sum(1 for p in info.pods if p.requests.get("nvidia.com/gpu", 0) > 0)
        if gpu_pods:
            text = time_slicing_warning(info.node, gpu_pods)
            if text:
                found.append(text)
    found += shared_efa_warnings(r.claim for r in report.state.claims.values()).values()
    found += [str(r) for r in report.loaded.rejections]
    found += report.loaded.unmodelled
    if report.kueue is not None:
        found += report.kueue.notes
    return found


def class_usage(state: ClusterState, compiler: SelectorCompiler) -> list[ClassUsage]:
    """Per node and DeviceClass: how many devices the class selects and how many are in use."""
    usage = []
    for name, info in state.nodes.items():
        counts: dict[str, list[int]] = {}
        for pool in gather_pools(state.slice_index, info.node, state.features):
            for resource_slice in pool.device_slices:
                for device in resource_slice.spec.devices:
                    view = _device_view(state, resource_slice.spec.driver, device)
                    in_use = _in_use(state, DeviceID(pool.driver, pool.name, device.name))
                    for class_name in classes_selecting(state.classes, compiler, view):
                        entry = counts.setdefault(class_name, [0, 0])
                        entry[0] += in_use
                        entry[1] += 1
        usage += [ClassUsage(name, c, used, total) for c, (used, total) in sorted(counts.items())]
    return usage


def _device_view(state: ClusterState, driver: str, device: Device) -> CelDevice:
    """The device's CEL view from the cluster's cache, as the allocator built it while scheduling (its
    values are checked and its selector results known already), else a new one, kept there."""
    view = state.device_views.get(id(device))
    if view is None:
        view = CelDevice.build(driver, device, list_type_attributes=state.features.list_type_attributes)
        state.device_views[id(device)] = view
    return view


def _in_use(state: ClusterState, device: DeviceID) -> int:
    return int(device in state.allocated.exclusive or device in state.allocated.aggregated_capacity)


def _plugin_devices(state: ClusterState, pod: str) -> list[str]:
    """Extended resources the pod got from a device plugin (counted, not named: the plugin picks)."""
    record = state.pods.get(pod)
    if record is None:
        return []
    return [
        f"{name} x{amount} (device plugin)"
        for name, amount in sorted(record.info.requests.items())
        if "/" in name and not name.startswith("hugepages-") and amount > 0
        and state.nodes[record.pod.spec.node_name].allocatable.get(name, 0) > 0
    ]


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
