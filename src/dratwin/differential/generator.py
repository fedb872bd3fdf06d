"""A seeded random generator of small allocator cases in the conformance format.

Case ``index`` of ``seed`` depends on nothing else (its random stream is seeded with both), so any
case can be regenerated alone. Cases are small (one to three nodes, one or two drivers, a few pools
and devices, one to three claims) so that an exhaustive search answers quickly on both sides, and
they cover every allocator feature (see :mod:`~dratwin.differential.themes` and
:func:`~dratwin.differential.coverage.coverage`). Some inputs are deliberately not API-valid,
as in upstream's own tests; cases are meant to be run with ``--skip-validation``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from dratwin.differential.casefile import Case
from dratwin.differential.gen_claims import allocated_claims, claims_to_allocate, device_classes
from dratwin.differential.gen_slices import TARGET_NODE, Wire, publish
from dratwin.differential.themes import draw_features, draw_themes

DRIVERS = ("driver-a", "driver-b")


def generate(seed: int, count: int, start: int = 0) -> Iterator[Case]:
    """Cases ``start`` .. ``start + count - 1`` of ``seed``."""
    for index in range(start, start + count):
        yield generate_case(seed, index)


def generate_case(seed: int, index: int) -> Case:
    rng = random.Random(f"dratwin-differential:{seed}:{index}")
    features = draw_features(rng)
    themes = draw_themes(rng, features)
    nodes = _nodes(rng)
    drivers = list(DRIVERS[: rng.choice((1, 2, 2))])
    classes = device_classes(rng, themes)
    published = publish(rng, themes, drivers, [n["metadata"]["name"] for n in nodes])
    in_use = allocated_claims(rng, themes, published.devices) if themes.allocated else []
    claims = claims_to_allocate(rng, themes, classes)
    return {
        "name": f"random-{seed}-{index:05d}",
        "source": f"dratwin.differential.generator seed {seed} index {index}",
        "features": features,
        "node": TARGET_NODE,
        "objects": [*nodes, *classes, *published.slices, *in_use, *claims],
        "allocate": [c["metadata"]["name"] for c in claims],
    }


def _nodes(rng: random.Random) -> list[Wire]:
    nodes = []
    for index in range(rng.choices((1, 2, 3), weights=(4, 4, 2))[0]):
        name = f"node-{index + 1}"
        region = "region-1" if rng.random() < 0.85 else "region-2"
        labels = {"kubernetes.io/hostname": name, "planet": "earth", "region": region}
        nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    return nodes
