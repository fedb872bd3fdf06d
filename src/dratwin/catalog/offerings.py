"""Offerings (zone x capacity type x price) of an instance type, and Karpenter's price ordering.

Karpenter (aws/karpenter-provider-aws ``pkg/providers/instancetype/offering/base_resolver.go`` @ 1d927085) gives
every instance type one offering per zone and capacity type: on-demand priced from the on-demand table (one price
for every zone of the region), spot priced per zone from the spot price history, ``Available`` only when the type
is offered in the zone, a price is known and the offering is not in the insufficient-capacity cache. dratwin
builds the same list from its catalog: on-demand offerings in every zone of the type where an on-demand price is
known, spot offerings only where a user catalog gives a spot price (dratwin ships no spot prices), and
``available`` false for what a user catalog lists as unavailable. Offerings without a price are left out rather
than listed unavailable.

Ordering: kubernetes-sigs/karpenter ``pkg/cloudprovider/types.go`` ``InstanceTypes.OrderByPrice`` (v1.14.0, commit
2266468) sorts instance types by the price of their cheapest *available* offering *compatible* with the
requirements; the NodeClaim's instance types are then truncated to the cheapest 60 and EC2 CreateFleet launches
the cheapest (on-demand: lowest-price allocation strategy). :func:`cheapest` does the same and breaks price ties
by instance type name (older Karpenter did so explicitly; current ``sort.Slice`` leaves ties unordered), so that
results are deterministic.

The default zones: us-east-1 has six Availability Zones (AZ IDs use1-az1 .. use1-az6, AWS "AWS Availability
Zones", docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html). One of them,
use1-az3, offers no Nitro (current-generation) instance types (wolfman.dev/posts/exclude-use1-az3), so dratwin
assumes five zones. Zone *names* are mapped to AZ IDs per AWS account, so ``DEFAULT_ZONES`` are placeholders in the
usual naming (us-east-1e left out, as it is use1-az3 in the mapping AWS users commonly show); give your own with
``zones:`` in a user catalog (see ``dratwin/data/CATALOG.md``). The sources dratwin has do not say in which zones
each type is offered, so every type is assumed to be offered in every zone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from dratwin.catalog.instances import InstanceType

ON_DEMAND = "on-demand"
SPOT = "spot"
CAPACITY_TYPES = (ON_DEMAND, SPOT)
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"

DEFAULT_REGION = "us-east-1"
DEFAULT_ZONES = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f")


@dataclass(frozen=True)
class Offering:
    """One way to launch an instance type: a zone, a capacity type and its price (USD per hour)."""

    zone: str
    capacity_type: str  # "on-demand" | "spot"
    price: float
    available: bool = True

    def labels(self) -> dict[str, str]:
        """The labels a node launched from this offering gets for zone and capacity type."""
        return {CAPACITY_TYPE_LABEL: self.capacity_type, ZONE_LABEL: self.zone}


@dataclass(frozen=True)
class Candidate:
    """An instance type with the offering Karpenter would launch it from (its cheapest compatible one)."""

    instance_type: InstanceType
    offering: Offering

    @property
    def name(self) -> str:
        return self.instance_type.name

    @property
    def price(self) -> float:
        return self.offering.price


# A requirements filter: label key -> allowed values ("In"); or node selector requirements as in a NodePool
# (``[{"key": ..., "operator": "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt", "values": [...]}]``);
# or any predicate over (instance type, offering). None allows everything.
Requirements: TypeAlias = (
    Mapping[str, str | Collection[str]]
    | Sequence[Mapping[str, Any]]
    | Callable[["InstanceType", Offering], bool]
    | None
)

_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def offering_labels(instance_type: InstanceType, offering: Offering) -> dict[str, str]:
    """Every label a node of ``instance_type`` launched from ``offering`` would carry (Karpenter's view)."""
    labels = instance_type.well_known_labels()
    labels[REGION_LABEL] = instance_type.region
    labels.update(offering.labels())
    return labels


def _requirement_matches(labels: Mapping[str, str], key: str, operator: str, values: Collection[str]) -> bool:
    value = labels.get(key)
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    # Gt / Lt: one integer value, compared with the label parsed as an integer (Kubernetes semantics).
    try:
        number, bound = int(value or ""), int(next(iter(values)))
    except (ValueError, StopIteration):
        return False
    return number > bound if operator == "Gt" else number < bound


def compile_requirements(requirements: Requirements) -> Callable[[InstanceType, Offering], bool]:
    """A predicate over (instance type, offering) for any form of ``Requirements``; ValueError on bad input."""
    if requirements is None:
        return lambda _it, _of: True
    if callable(requirements):
        return requirements
    checks: list[tuple[str, str, frozenset[str]]] = []
    if isinstance(requirements, Mapping):
        for key, allowed in requirements.items():
            values = frozenset([allowed] if isinstance(allowed, str) else (str(v) for v in allowed))
            checks.append((str(key), "In", values))
    else:
        for index, raw in enumerate(requirements):
            if not isinstance(raw, Mapping) or "key" not in raw:
                raise ValueError(f"requirement {index}: expected a mapping with key, operator and values")
            operator = str(raw.get("operator", "In"))
            if operator not in _OPERATORS:
                raise ValueError(f"requirement {index} ({raw['key']}): unknown operator {operator!r}; "
                                 f"use one of {', '.join(_OPERATORS)}")
            checks.append((str(raw["key"]), operator, frozenset(str(v) for v in raw.get("values") or ())))

    def matches(instance_type: InstanceType, offering: Offering) -> bool:
        labels = offering_labels(instance_type, offering)
        return all(_requirement_matches(labels, key, op, values) for key, op, values in checks)

    return matches


def _offering_key(offering: Offering) -> tuple[float, str, str]:
    return (offering.price, offering.zone, offering.capacity_type)


def cheapest_offering(instance_type: InstanceType, requirements: Requirements = None) -> Offering | None:
    """The cheapest available offering of ``instance_type`` compatible with ``requirements`` (None: none is).

    Ties go to the zone, then the capacity type, that sorts first.
    """
    allowed = compile_requirements(requirements)
    best: Offering | None = None
    for offering in instance_type.offerings:
        if offering.available and allowed(instance_type, offering) and (
            best is None or _offering_key(offering) < _offering_key(best)
        ):
            best = offering
    return best


def cheapest(types: Iterable[InstanceType], requirements: Requirements = None) -> list[Candidate]:
    """Instance types ordered as Karpenter orders them for a launch: by the price of their cheapest available
    offering compatible with ``requirements``, ties by name; each type once, with that offering.

    Types without such an offering are left out (Karpenter sorts them last at +Inf and never launches them).
    The first candidate is what Karpenter would launch when all of them fit the pods.
    """
    allowed = compile_requirements(requirements)
    found = []
    for instance_type in types:
        offering = cheapest_offering(instance_type, allowed)
        if offering is not None:
            found.append(Candidate(instance_type, offering))
    found.sort(key=lambda c: (c.offering.price, c.instance_type.name))
    return found
