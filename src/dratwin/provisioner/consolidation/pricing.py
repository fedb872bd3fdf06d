"""Prices as Karpenter compares them: an offering's launch price, the worst launch price over capacity types
(``Offerings.WorstLaunchPrice``), the order replacements are offered in, and NodePool ``minValues``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from dratwin.catalog import InstanceType
from dratwin.provisioner.candidates import Template
from dratwin.provisioner.consolidation.model import CAPACITY_ORDER
from dratwin.provisioner.solver import Pool


def offers(template: Template, capacity_type: str) -> bool:
    return any(o.capacity_type == capacity_type for o in template.offerings)


def worst_launch_price(template: Template, capacity_types: Sequence[str] = CAPACITY_ORDER) -> float:
    """``Offerings.WorstLaunchPrice``: the most expensive offering of the first capacity type (reserved,
    spot, on-demand) the type has."""
    for capacity_type in capacity_types:
        prices = [o.price for o in template.offerings if o.capacity_type == capacity_type]
        if prices:
            return max(prices)
    return math.inf


def launch_price(template: Template) -> float:
    offering = template.cheapest
    return offering.price if offering is not None else math.inf


def price_order(template: Template) -> tuple[float, str]:
    return (launch_price(template), template.instance_type.name)


def min_values_problem(pool: Pool, options: Sequence[Template]) -> str:
    for key, wanted in pool.min_values.items():
        values = {t.node.metadata.labels.get(key) for t in options} - {None}
        if len(values) < wanted:
            return f"minValues {wanted} for {key} not met: {len(values)} value(s) among the cheaper instance types"
    return ""


def min_values_prefix(pool: Pool, options: Sequence[Template]) -> int:
    """How many of the (ordered) options it takes to meet every minValues."""
    seen: dict[str, set[str]] = {key: set() for key in pool.min_values}
    for count, template in enumerate(options, 1):
        for key in seen:
            value = template.node.metadata.labels.get(key)
            if value is not None:
                seen[key].add(value)
        if all(len(seen[k]) >= w for k, w in pool.min_values.items()):
            return count
    return len(options)


def node_price(instance: InstanceType | None, zone: str, capacity_type: str) -> tuple[float, bool]:
    """A running node's price from the catalog: its offering in its zone and capacity type (True), else the type's
    last list price, or 0 (False: Karpenter sees no price for it)."""
    if instance is None:
        return 0.0, False
    offering = next((o for o in instance.offerings if (o.zone, o.capacity_type) == (zone, capacity_type)), None)
    if offering is not None:
        return offering.price, True
    return instance.list_price_usd_per_hour or 0.0, False
