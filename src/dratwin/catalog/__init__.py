"""Typed access to the packaged AWS data: instance types, Karpenter's node model, DRA device metadata, MIG.

    >>> from dratwin.catalog import load_catalog
    >>> p5 = load_catalog().get("p5.48xlarge")
    >>> p5.gpus.model, p5.gpus.count, p5.efa_count, p5.max_pods
    ('NVIDIA H100 80GB HBM3', 8, 32, 100)

The data files and their sources are listed in ``dratwin/data/SOURCES.md``.
"""

from dratwin.catalog.dra import DraDeviceMetadata, EfaDeviceMetadata, EfaMetadata, GpuDeviceMetadata, GpuMetadata
from dratwin.catalog.instances import (
    Catalog,
    Gpus,
    IncompleteInstanceTypeError,
    InstanceType,
    Neuron,
    UnknownInstanceTypeError,
    load_catalog,
)
from dratwin.catalog.nvidia import (
    CapturedEfa,
    CapturedGpu,
    CapturedTopology,
    MigInstance,
    MigLayout,
    MigProfile,
    UnknownMigProfileError,
    captured_topology,
    classic_memory,
    mig_layout,
)
from dratwin.catalog.resources import NodeResources

__all__ = [
    "CapturedEfa",
    "CapturedGpu",
    "CapturedTopology",
    "Catalog",
    "DraDeviceMetadata",
    "EfaDeviceMetadata",
    "EfaMetadata",
    "GpuDeviceMetadata",
    "GpuMetadata",
    "Gpus",
    "IncompleteInstanceTypeError",
    "InstanceType",
    "MigInstance",
    "MigLayout",
    "MigProfile",
    "Neuron",
    "NodeResources",
    "UnknownInstanceTypeError",
    "UnknownMigProfileError",
    "captured_topology",
    "classic_memory",
    "load_catalog",
    "mig_layout",
]
