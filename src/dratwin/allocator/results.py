"""Turning a found solution into API AllocationResults: device results, config, node selector."""

from __future__ import annotations

from dratwin.allocator.features import Features
from dratwin.allocator.search import ClaimPlan, DeviceResult
from dratwin.allocator.variants import Variant, select_variant
from dratwin.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from dratwin.api.quantity import Quantity
from dratwin.api.resource import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
)
from dratwin.errors import AllocationError


def build_result(
    plan: ClaimPlan, node_name: str, features: Features, variant: Variant | None = None
) -> AllocationResult:
    variant = variant or select_variant(features)
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=[_device_result(r, features) for r in plan.results],
            config=_configs(plan),
        ),
        node_selector=_node_selector(plan, node_name, variant.binds_to_node),
    )


def _device_result(result: DeviceResult, features: Features) -> DeviceRequestAllocationResult:
    request, candidate = result.request, result.candidate
    consumed: dict[str, str | int | float] = {}
    if result.consumed:
        for name, amount in result.consumed.items():
            written = candidate.device.capacity[name].value
            consumed[name] = str(Quantity(amount, Quantity.parse(written).format))
    device = candidate.device
    return DeviceRequestAllocationResult(
        request=request.full_name,
        driver=candidate.id.driver,
        pool=candidate.id.pool,
        device=candidate.id.device,
        admin_access=True if request.admin_access else None,
        tolerations=list(request.tolerations),
        binding_conditions=list(device.binding_conditions) if features.binding_conditions else [],
        binding_failure_conditions=list(device.binding_failure_conditions) if features.binding_conditions else [],
        share_id=result.share_id,
        consumed_capacity=consumed,
    )


def _configs(plan: ClaimPlan) -> list[DeviceAllocationConfiguration]:
    """Class configs once per class (naming every request that used it), then the claim's configs.

    As in 1.36, a claim config that names several requests is repeated once per request it names.
    """
    configs: list[DeviceAllocationConfiguration] = []
    class_entries: dict[str, list[DeviceAllocationConfiguration]] = {}
    for index, views in enumerate(plan.requests):
        view = views[plan.chosen_sub.get(index, 0)]
        device_class = view.device_class
        if device_class is None:
            continue
        name = device_class.metadata.name
        if name in class_entries:
            for entry in class_entries[name]:
                entry.requests.append(view.full_name)
            continue
        entries = [
            DeviceAllocationConfiguration(source="FromClass", requests=[view.full_name], opaque=config.opaque)
            for config in device_class.spec.config
        ]
        class_entries[name] = entries
        configs.extend(entries)
    for config in plan.claim.spec.devices.config:
        names = config.requests
        copies = sum(1 for i in range(len(plan.requests)) if _config_names(names, plan, i)) if names else 1
        configs.extend(
            DeviceAllocationConfiguration(source="FromClaim", requests=list(config.requests), opaque=config.opaque)
            for _ in range(copies)
        )
    return configs


def _config_names(names: list[str], plan: ClaimPlan, index: int) -> bool:
    request = plan.claim.spec.devices.requests[index]
    if request.name in names:
        return True
    if not request.first_available:
        return False
    chosen = request.first_available[plan.chosen_sub.get(index, 0)]
    return f"{request.name}/{chosen.name}" in names


def _node_selector(plan: ClaimPlan, node_name: str, binds_to_node: bool) -> NodeSelector | None:
    """Local devices pin the claim to the node; otherwise the slices' selectors are ANDed in one term.
    ``binds_to_node``: a device's bindsToNode pins it too (not in the stable variant)."""
    merged = NodeSelectorTerm()
    for result in plan.results:
        device, spec = result.candidate.device, result.candidate.slice.spec
        if spec.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = spec.node_name, spec.node_selector
        if name or (binds_to_node and device.binds_to_node):
            return NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In", values=[node_name])]
                    )
                ]
            )
        if selector is None or not selector.node_selector_terms:
            continue
        if len(selector.node_selector_terms) > 1:
            raise AllocationError(
                f"create NodeSelector for claim {plan.claim.metadata.name}: unsupported ResourceSlice.NodeSelector "
                f"with {len(selector.node_selector_terms)} terms",
                subject=("ResourceSlice", result.candidate.slice.metadata.name),
            )
        term = selector.node_selector_terms[0]
        _merge(term.match_fields, merged.match_fields)
        _merge(term.match_expressions, merged.match_expressions)
    if merged.match_fields or merged.match_expressions:
        return NodeSelector(node_selector_terms=[merged])
    return None


def _merge(source: list[NodeSelectorRequirement], target: list[NodeSelectorRequirement]) -> None:
    for requirement in source:
        if not any(
            r.key == requirement.key and r.operator == requirement.operator and set(r.values) == set(requirement.values)
            for r in target
        ):
            target.append(requirement)
