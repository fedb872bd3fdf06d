"""``plan --optimal``: the cost-optimal fleet for the same pods, beside Karpenter's choice.

The pods Karpenter provisions for become groups of identical pods; each (NodePool, instance type) an
option with its allocatable and, for DRA, the devices of each DeviceClass its drivers would publish.
Which groups an option can hold at all comes from the same checks the provisioning simulation uses
(taints, affinity, the allocator on an empty node), so topology that counts cannot express (a GPU and an
EFA on one PCIe root) still rules types out. The MILP then packs whole nodes; every node of the result
is re-checked with the allocator, and one that fails is reported, never hidden.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from dratwin.allocator import AllocatedState, Allocator
from dratwin.cel.classes import classes_selecting
from dratwin.provisioner.candidates import Template
from dratwin.provisioner.optimal import NodeOption, OptimalFleet, PodGroup, solve_optimal
from dratwin.provisioner.solver import PodToPlace, Pool, Solver

DEVICE_DIMENSION = "device/"


@dataclass
class OptimalComparison:
    fleet: OptimalFleet
    karpenter_cost: float
    nodes: dict[str, int]  # instance type -> count
    unverified: list[str] = field(default_factory=list)  # slots whose devices the allocator could not place

    @property
    def ratio(self) -> float:
        """Karpenter's cost over the optimum (1.0 = Karpenter found the cheapest fleet)."""
        return self.karpenter_cost / self.fleet.cost_per_hour if self.fleet.cost_per_hour else 1.0

    def lines(self) -> list[str]:
        fleet = self.fleet
        proved = fleet.status in ("optimal", "infeasible")  # infeasible: optimal for the pods that fit at all
        best = "the optimum" if proved else "the cheapest fleet found"
        status = "optimal for the pods that fit some option" if fleet.status == "infeasible" else fleet.status
        out = [
            f"cost-optimal fleet (MILP, HiGHS; {status}, {fleet.solve_seconds:.2f} s): "
            f"${fleet.cost_per_hour:.4f}/hour, lower bound ${fleet.lower_bound:.4f}/hour",
            f"Karpenter's fleet: ${self.karpenter_cost:.4f}/hour = {self.ratio:.3f} x {best} "
            f"({(self.ratio - 1) * 100:+.1f}%)",
        ]
        if not proved and fleet.lower_bound > 0:
            out.append(f"  at most {self.karpenter_cost / fleet.lower_bound:.3f} x the optimum (from the lower bound)")
        out += [f"  {count} x {name}" for name, count in sorted(self.nodes.items())]
        unplaceable = sum(fleet.unplaceable.values())
        if unplaceable:
            out.append(f"  {unplaceable} pod(s) fit no option")
        out += [f"  not verified: {slot} (the allocator could not place all its devices)" for slot in self.unverified]
        return out


def optimal_fleet(
    solver: Solver,
    pods: Sequence[PodToPlace],
    karpenter_cost: float,
    headroom: dict[str, dict[str, int]],
    time_limit: float,
) -> OptimalComparison:
    """``headroom``: per limited NodePool, what its limits leave before anything is launched."""
    by_shape: dict[bytes, list[PodToPlace]] = defaultdict(list)
    for pod in pods:
        by_shape[pod.shape].append(pod)
    groups: list[PodGroup] = []
    representatives: dict[str, PodToPlace] = {}
    for index, (_shape, members) in enumerate(sorted(by_shape.items(), key=lambda item: item[1][0].info.order)):
        name = f"g{index}"
        representatives[name] = members[0]
        groups.append(PodGroup(name, len(members), _requests(members[0])))
    options: list[NodeOption] = []
    templates: dict[str, tuple[Pool, Template]] = {}
    for pool in solver.pools:
        if pool.static:
            continue  # Karpenter never launches a static NodePool's nodes for pods
        for template in pool.templates:
            offering = template.cheapest
            if offering is None:
                continue
            fits = frozenset(g for g, pod in representatives.items() if solver.fits_alone(pool, template, pod))
            if not fits:
                continue
            name = f"{pool.name}/{template.instance_type.name}"
            capacity = dict(template.allocatable)
            capacity.update(_device_capacity(solver, template))
            options.append(
                NodeOption(
                    name, offering.price, capacity, fits=fits, pool=pool.name, limit_capacity=dict(template.capacity)
                )
            )
            templates[name] = (pool, template)
    fleet = solve_optimal(groups, options, pool_limits=headroom, time_limit=time_limit)
    nodes = Counter({name.split("/", 1)[1]: count for name, count in fleet.nodes.items() if count})
    comparison = OptimalComparison(fleet, karpenter_cost, dict(nodes))
    comparison.unverified = _verify(solver, fleet, templates, by_shape, representatives)
    return comparison


def _requests(pod: PodToPlace) -> dict[str, int]:
    requests = {k: v for k, v in pod.info.requests.items() if v}
    for claim in pod.claims:
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                key = DEVICE_DIMENSION + request.exactly.device_class_name
                requests[key] = requests.get(key, 0) + (request.exactly.count or 1)
    return requests


def _device_capacity(solver: Solver, template: Template) -> dict[str, int]:
    """How many devices of each DeviceClass the template's slices hold (the MILP's device dimensions)."""
    allocator = Allocator(
        solver.features, solver.classes, template.index, AllocatedState(), solver.compiler, solver.device_views
    )
    counts: Counter[str] = Counter()
    for resource_slice in template.slices:
        for device in resource_slice.spec.devices:
            view = allocator.cel_device(resource_slice, device)
            counts.update(DEVICE_DIMENSION + name for name in classes_selecting(solver.classes, solver.compiler, view))
    return dict(counts)


def _verify(
    solver: Solver,
    fleet: OptimalFleet,
    templates: dict[str, tuple[Pool, Template]],
    by_shape: dict[bytes, list[PodToPlace]],
    representatives: dict[str, PodToPlace],
) -> list[str]:
    """Allocate the devices of every launched node's pods for real; the slots where that fails."""
    failed = []
    slots: dict[str, list[PodToPlace]] = defaultdict(list)
    for group, placed in fleet.placement.items():
        members = list(by_shape[representatives[group].shape])
        for slot, count in sorted(placed.items()):
            slots[slot] += [members.pop() for _ in range(count)]
    for slot, pods in sorted(slots.items()):
        option = fleet.launched.get(slot)
        if option is None or not any(p.claims for p in pods):
            continue
        _pool, template = templates[option]
        state = AllocatedState()
        for pod in pods:
            if not pod.claims:
                continue
            allocator = Allocator(
                solver.features, solver.classes, template.index, state, solver.compiler, solver.device_views
            )
            outcome = allocator.allocate(template.node, pod.claims)
            if outcome.results is None:
                failed.append(slot)
                break
            for key, result in zip(pod.claim_keys, outcome.results, strict=True):
                state.hold(key, result, solver.features)
    return failed
