"""A PodSet's topology request: from the pod template's annotations to ``spec.podSets[].topologyRequest``.

The twin of ``pkg/controller/jobframework/tas.go`` (``NewPodSetTopologyRequest(...).Build``) and of the
helpers that read a request (``pkg/util/tas``, ``pkg/workload`` IsExplicitlyRequestingTAS) at Kueue ``ff69552``:

- ``kueue.x-k8s.io/podset-required-topology: <level>``: every pod in one domain of that level;
- ``kueue.x-k8s.io/podset-preferred-topology: <level>``: one domain of that level if possible, else the
  next level up, and so on; at the top, spread over several domains;
- ``kueue.x-k8s.io/podset-unconstrained-topology: "true"``: any nodes, no topology constraint;
- ``kueue.x-k8s.io/podset-slice-required-topology`` with ``kueue.x-k8s.io/podset-slice-size``: slices of
  that many pods, each slice within one domain of that level;
- ``kueue.x-k8s.io/podset-group-name``: the PodSets of one group are placed together (with required or
  preferred only).

The first of required, preferred and unconstrained that is present wins; the integration's pod index
label (a Job's ``batch.kubernetes.io/job-completion-index``) is recorded even when no annotation is set, so
every Job's PodSet has a topology request, which alone does not ask for TAS.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dratwin.api.kueue import PodSetTopologyRequest
from dratwin.api.validation_formats import label_key

REQUIRED_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
SLICE_CONSTRAINTS_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
GROUP_NAME_ANNOTATION = "kueue.x-k8s.io/podset-group-name"
TOPOLOGY_SCHEDULING_GATE = "kueue.x-k8s.io/topology"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
POD_GROUP_POD_INDEX_LABEL = "kueue.x-k8s.io/pod-group-pod-index"
MAX_SLICE_LAYERS = 3

_EXPLICIT_ANNOTATIONS = (PREFERRED_ANNOTATION, REQUIRED_ANNOTATION, SLICE_TOPOLOGY_ANNOTATION,
                         SLICE_CONSTRAINTS_ANNOTATION)


def topology_request(annotations: Mapping[str, str], pod_index_label: str | None = None) -> dict[str, Any] | str | None:
    """The wire ``topologyRequest`` Kueue builds from a pod template's annotations; ``None`` when it builds
    none; a string when the annotations cannot be read (Kueue then makes no Workload)."""
    request: dict[str, Any] = {}
    required = annotations.get(REQUIRED_ANNOTATION)
    preferred = annotations.get(PREFERRED_ANNOTATION)
    unconstrained = annotations.get(UNCONSTRAINED_ANNOTATION)
    slice_topology = annotations.get(SLICE_TOPOLOGY_ANNOTATION)
    slice_size = annotations.get(SLICE_SIZE_ANNOTATION)
    constraints = annotations.get(SLICE_CONSTRAINTS_ANNOTATION)
    if required is not None:
        request["required"] = required
    elif preferred is not None:
        request["preferred"] = preferred
    elif unconstrained is not None:
        parsed = _parse_bool(unconstrained)
        if parsed is None:
            return f'strconv.ParseBool: parsing "{unconstrained}": invalid syntax ({UNCONSTRAINED_ANNOTATION})'
        request["unconstrained"] = parsed
    else:
        has_slices = (slice_topology is not None and slice_size is not None) or constraints is not None
        if not has_slices and pod_index_label is None:
            return None
    if constraints is not None:
        layers = _parse_constraints(constraints)
        if isinstance(layers, str):
            return layers
        request["podsetSliceRequiredTopologyConstraints"] = layers
    elif slice_topology is not None and slice_size is not None:
        if not slice_size.lstrip("-").isdigit():
            return f'strconv.ParseInt: parsing "{slice_size}": invalid syntax ({SLICE_SIZE_ANNOTATION})'
        request["podSetSliceRequiredTopology"] = slice_topology
        request["podSetSliceSize"] = int(slice_size)
    if pod_index_label is not None:
        request["podIndexLabel"] = pod_index_label
    group = annotations.get(GROUP_NAME_ANNOTATION)
    if group is not None and (required is not None or preferred is not None):
        request["podSetGroupName"] = group
    return request


def annotation_problems(annotations: Mapping[str, str], count: int | None = None) -> list[tuple[str, str]]:
    """What Kueue's job webhook refuses in a pod template's TAS annotations (``ValidateTASPodSetRequest``,
    ``ValidateSliceSizeAnnotationUpperBound``): (annotation, problem), "" naming the annotations as a whole."""
    found = [key for key in (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, UNCONSTRAINED_ANNOTATION) if key in annotations]
    problems: list[tuple[str, str]] = []
    if len(found) > 1:
        problems.append(("", f'must not contain more than one topology annotation: ["{REQUIRED_ANNOTATION}", '
                             f'"{PREFERRED_ANNOTATION}", "{UNCONSTRAINED_ANNOTATION}"]'))
    for key in (REQUIRED_ANNOTATION, PREFERRED_ANNOTATION, SLICE_TOPOLOGY_ANNOTATION):
        if key in annotations:
            problems += [(key, problem) for problem in label_key(annotations[key])]
    group = annotations.get(GROUP_NAME_ANNOTATION)
    if group is not None:
        if group.isdigit():
            problems.append((GROUP_NAME_ANNOTATION, f"{group!r}: must not be a number"))
        for key in (SLICE_SIZE_ANNOTATION, SLICE_TOPOLOGY_ANNOTATION):
            if key in annotations:
                problems.append((GROUP_NAME_ANNOTATION, f"may not be set when '{key}' is specified"))
        if REQUIRED_ANNOTATION not in annotations and PREFERRED_ANNOTATION not in annotations:
            problems.append((GROUP_NAME_ANNOTATION, f"may not be set when neither '{PREFERRED_ANNOTATION}' nor "
                                                    f"'{REQUIRED_ANNOTATION}' is specified"))
    unconstrained = annotations.get(UNCONSTRAINED_ANNOTATION)
    if unconstrained is not None and _parse_bool(unconstrained) is None:
        problems.append((UNCONSTRAINED_ANNOTATION, f"{unconstrained!r}: must be a boolean value"))
    size = annotations.get(SLICE_SIZE_ANNOTATION)
    if size is not None:
        if not size.lstrip("-").isdigit():
            problems.append((SLICE_SIZE_ANNOTATION, f"{size!r}: must be a numeric value"))
        elif int(size) < 1:
            problems.append((SLICE_SIZE_ANNOTATION, f"{size!r}: must be greater than or equal to 1"))
        elif count is not None and int(size) > count:
            problems.append((SLICE_SIZE_ANNOTATION, f"{size!r}: must not be greater than pod set count {count}"))
        if SLICE_TOPOLOGY_ANNOTATION not in annotations:
            problems.append((SLICE_SIZE_ANNOTATION, f"may not be set when '{SLICE_TOPOLOGY_ANNOTATION}' is not "
                                                    "specified"))
    elif SLICE_TOPOLOGY_ANNOTATION in annotations:
        problems.append((SLICE_SIZE_ANNOTATION, f"must be set when '{SLICE_TOPOLOGY_ANNOTATION}' is specified"))
    return problems


def _parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    return None


def _parse_constraints(text: str) -> list[dict[str, Any]] | str:
    try:
        layers = json.loads(text)
    except json.JSONDecodeError as error:
        return f"failed to parse multi-layer topology constraints annotation: {error}"
    if not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        return "failed to parse multi-layer topology constraints annotation: not a list of objects"
    if not 1 <= len(layers) <= MAX_SLICE_LAYERS:
        return f"topology constraints must contain between 1 and 3 entries: got {len(layers)}"
    return layers


def is_tas_pod(annotations: Mapping[str, str]) -> bool:
    """``utiltas.IsTAS``: a pod placed by TAS (its usage is booked through its Workload, not as a non-TAS pod)."""
    return UNCONSTRAINED_ANNOTATION in annotations or any(key in annotations for key in _EXPLICIT_ANNOTATIONS)


def explicitly_requests_tas(request: PodSetTopologyRequest | None) -> bool:
    """``IsExplicitlyRequestingTAS`` for one PodSet: ``unconstrained`` set (even to false), required,
    preferred or a slice request."""
    if request is None:
        return False
    return (request.unconstrained is not None or request.required is not None or request.preferred is not None
            or request.pod_set_slice_required_topology is not None or request.pod_set_slice_size is not None
            or bool(request.podset_slice_required_topology_constraints))


def slice_layers(request: PodSetTopologyRequest | None) -> list[tuple[str, int]]:
    """``PodSetSliceRequiredTopologyConstraints``: the slice layers, outermost first (the multi-layer list, or
    the single layer of ``podSetSliceRequiredTopology`` with its size, 0 when unset)."""
    if request is None:
        return []
    if request.podset_slice_required_topology_constraints:
        return [(c.topology, c.size) for c in request.podset_slice_required_topology_constraints]
    if request.pod_set_slice_required_topology is None:
        return []
    return [(request.pod_set_slice_required_topology, request.pod_set_slice_size or 0)]
