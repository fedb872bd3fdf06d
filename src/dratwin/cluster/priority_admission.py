"""The priority admission plugin (``plugin/pkg/admission/priority``) as the API server runs it on pod create."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dratwin.api.codec import decode_as, split_api_version
from dratwin.api.meta import ObjectMeta
from dratwin.api.workloads import PriorityClass

Raw = dict[str, Any]

SYSTEM_PRIORITY_CLASSES: Mapping[str, int] = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


@dataclass(frozen=True)
class Priority:
    class_name: str
    value: int
    preemption_policy: str


class PriorityAdmission:
    """``plugin/pkg/admission/priority`` on pod create: resolve ``priorityClassName`` into ``priority``.

    The globalDefault class applies to pods that name none (the lowest value wins if several claim to be
    the default); without one, priority is 0. The system classes exist in every cluster.
    """

    def __init__(self, classes: Sequence[PriorityClass]) -> None:
        self.classes: dict[str, PriorityClass] = {
            name: PriorityClass(metadata=ObjectMeta(name=name), value=value)
            for name, value in SYSTEM_PRIORITY_CLASSES.items()
        }
        for pc in classes:
            self.classes[pc.metadata.name] = pc
        defaults = [pc for pc in classes if pc.global_default]
        self.default = min(defaults, key=lambda pc: (pc.value, pc.metadata.name)) if defaults else None

    @classmethod
    def from_objects(cls, objects: Sequence[Raw]) -> PriorityAdmission:
        classes = []
        for raw in objects:
            if raw.get("kind") == "PriorityClass" and split_api_version(str(raw.get("apiVersion") or ""))[0] == \
                    "scheduling.k8s.io":
                name = (raw.get("metadata") or {}).get("name") or "<unnamed>"
                classes.append(decode_as(raw, PriorityClass, f"PriorityClass {name}"))
        return cls(classes)

    def admit(self, spec: Mapping[str, Any]) -> Priority | tuple[str, str]:
        """The resolved priority, or (the reason the plugin gives, a hint)."""
        named = str(spec.get("priorityClassName") or "")
        if not named:
            if self.default is None:
                resolved = Priority("", 0, PREEMPT_LOWER_PRIORITY)
            else:
                resolved = Priority(self.default.metadata.name, self.default.value,
                                     self.default.preemption_policy or PREEMPT_LOWER_PRIORITY)
        else:
            pc = self.classes.get(named)
            if pc is None:
                return (f"no PriorityClass with name {named} was found", self._unknown_hint(named))
            resolved = Priority(named, pc.value, pc.preemption_policy or PREEMPT_LOWER_PRIORITY)
        written = spec.get("priority")
        if written is not None and written != resolved.value:
            return (f"the integer value of priority ({written}) must not be provided in pod spec; priority "
                    f"admission controller computed {resolved.value} from the given PriorityClass name",
                    "remove spec.priority; it is computed from spec.priorityClassName")
        policy = spec.get("preemptionPolicy")
        if policy and policy != resolved.preemption_policy:
            return (f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; priority "
                    f"admission controller computed {resolved.preemption_policy} from the given PriorityClass name",
                    "remove spec.preemptionPolicy or set it on the PriorityClass")
        return resolved

    def _unknown_hint(self, name: str) -> str:
        known = sorted(self.classes)
        close = difflib.get_close_matches(name, known, 1)
        if close:
            return f'did you mean "{close[0]}"? known classes: {", ".join(known)}'
        return f"create the PriorityClass or use one of: {', '.join(known)}"


def apply_priority(spec: Raw, priority: Priority) -> None:
    """The resolved priority written into the pod spec, as the plugin mutates it."""
    if priority.class_name:
        spec["priorityClassName"] = priority.class_name
    spec["priority"] = priority.value
    spec["preemptionPolicy"] = priority.preemption_policy
