"""EFA adapters DRANET publishes on instance types without a packaged capture of them (``dranet-efas.yaml``).

Karpenter's DRA metadata gives each EFA's PCIe root (and sometimes NUMA node) but no PCI address, so generated
EFAs get placeholder addresses; where a live DRANET ResourceSlice is known, its addresses are used instead.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from dratwin.catalog._data import data_yaml
from dratwin.catalog.nvidia import CapturedEfa

DRANET_FILE = "dranet-efas.yaml"


@functools.cache
def live_efas() -> Mapping[str, tuple[CapturedEfa, ...]]:
    """Instance type -> its EFAs as a live DRANET slice shows them, in the order of Karpenter's metadata."""
    return {
        str(name): tuple(CapturedEfa(str(e["pciAddress"]), str(e["pcieRoot"]), int(e["numaNode"]))
                         for e in raw["efas"])
        for name, raw in data_yaml(DRANET_FILE)["instance_types"].items()
    }
