"""Which allocator features one random case exercises, drawn once per case.

Themes are independent of the case's feature gates on purpose: a case with device taints but
DRADeviceTaints off tests the disabled behaviour, which upstream defines too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Case feature names, and how often each is on.
FEATURE_ODDS = {
    "adminAccess": 0.6,
    "prioritizedList": 0.6,
    "partitionableDevices": 0.6,
    "deviceTaints": 0.6,
    "deviceBindingConditions": 0.4,
    "consumableCapacity": 0.5,
    "listTypeAttributes": 0.05,
}
# Upstream picks the stable allocator when these are off; that happens in this share of the cases.
STABLE_SHARE = 0.3
STABLE_BLOCKERS = ("consumableCapacity", "deviceBindingConditions", "listTypeAttributes")


@dataclass(frozen=True)
class Themes:
    network: bool  # network-attached slices: node selector, all nodes, per-device node selection
    broken: bool  # incomplete, outdated and invalid pools
    counters: bool  # partitionable devices with shared counters
    same_pool_name: bool  # the second driver's pools are named like the first driver's
    shared: bool  # multi-allocatable devices, capacity and request policies
    taints: bool  # device taints and tolerations
    binding: bool  # binding conditions
    admin: bool  # admin access requests and allocated results
    prioritized: bool  # firstAvailable subrequests
    constraints: bool  # matchAttribute / distinctAttribute
    cel_errors: bool  # selectors that fail at run time on some devices
    allocated: bool  # claims already allocated (devices in use)
    config: bool  # class and claim config
    list_attributes: bool  # list-typed attributes (DRAListTypeAttributes)


def draw_features(rng: random.Random) -> list[str]:
    features = [name for name, odds in FEATURE_ODDS.items() if rng.random() < odds]
    if rng.random() < STABLE_SHARE:
        features = [name for name in features if name not in STABLE_BLOCKERS]
    return features


def draw_themes(rng: random.Random, features: list[str]) -> Themes:
    def draw(odds: float) -> bool:
        return rng.random() < odds

    return Themes(
        network=draw(0.3),
        broken=draw(0.2),
        counters=draw(0.35),
        same_pool_name=draw(0.4),
        shared=draw(0.35),
        taints=draw(0.3),
        binding=draw(0.2),
        admin=draw(0.2),
        prioritized=draw(0.4),
        constraints=draw(0.4),
        cel_errors=draw(0.25),
        allocated=draw(0.5),
        config=draw(0.25),
        list_attributes="listTypeAttributes" in features and draw(0.8),
    )
