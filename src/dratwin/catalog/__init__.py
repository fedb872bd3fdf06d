"""Typed access to the packaged AWS data: instance types, prices and offerings, Karpenter's node model, DRA device
metadata, MIG, the Neuron devices of Trainium and Inferentia types.

    >>> from dratwin.catalog import load_catalog
    >>> p5 = load_catalog().get("p5.48xlarge")
    >>> p5.gpus.model, p5.gpus.count, p5.efa_count, p5.max_pods
    ('NVIDIA H100 80GB HBM3', 8, 32, 100)
    >>> [(c.name, c.price) for c in load_catalog().cheapest({"karpenter.k8s.aws/instance-cpu": "4"})][:2]
    [('t4g.xlarge', 0.1344), ('c6g.xlarge', 0.136)]

User catalogs (prices, spot, discount, region, zones, more instance types) are merged with
``load_catalog([path, ...])``; the format is in ``dratwin/data/CATALOG.md``.

The data files and their sources are listed in ``dratwin/data/SOURCES.md``.
"""

from dratwin.catalog.dra import DraDeviceMetadata, EfaDeviceMetadata, EfaMetadata, GpuDeviceMetadata, GpuMetadata
from dratwin.catalog.instances import (
    Catalog,
    CatalogFileError,
    Gpus,
    IncompleteInstanceTypeError,
    InstanceType,
    Neuron,
    UnknownInstanceTypeError,
    load_catalog,
)
from dratwin.catalog.neuron import GROUP_ATTRIBUTES, NeuronShape, group_hash, neuron_shape, neuron_shapes
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
from dratwin.catalog.offerings import (
    DEFAULT_REGION,
    DEFAULT_ZONES,
    Candidate,
    Offering,
    Requirements,
    cheapest,
)
from dratwin.catalog.resources import NodeResources
from dratwin.catalog.ultraservers import (
    UltraServer,
    UnknownUltraServerError,
    ultraserver,
    ultraservers,
    ultraservers_of,
)

__all__ = [
    "DEFAULT_REGION",
    "DEFAULT_ZONES",
    "GROUP_ATTRIBUTES",
    "Candidate",
    "CapturedEfa",
    "CapturedGpu",
    "CapturedTopology",
    "Catalog",
    "CatalogFileError",
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
    "NeuronShape",
    "NodeResources",
    "Offering",
    "Requirements",
    "UltraServer",
    "UnknownInstanceTypeError",
    "UnknownMigProfileError",
    "UnknownUltraServerError",
    "captured_topology",
    "cheapest",
    "classic_memory",
    "group_hash",
    "load_catalog",
    "mig_layout",
    "neuron_shape",
    "neuron_shapes",
    "ultraserver",
    "ultraservers",
    "ultraservers_of",
]
