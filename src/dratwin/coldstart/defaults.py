"""Bandwidths a scenario can start from when it knows its instance types but has not measured its own.

``ColdStartSpec`` leaves every bandwidth at 0 (that step takes no time) so that a scenario states what it
models; :func:`suggested_bandwidths` gives documented values to fill in. Each is marked with its source
or as an assumption. All are bytes per second.

Node network (from the catalog's ``network_bandwidth_gbps``, Karpenter's instance-types page generated
from EC2 DescribeInstanceTypes; for "up to" sizes the baseline): g5/g6/g6e.xlarge 2.5 Gb/s,
g6.12xlarge 40, g6e.12xlarge 100, p4d.24xlarge 400, p5.48xlarge and p5en.48xlarge 3200 (EFA; the ENA
share used for S3 and registries is smaller: see the per-flow limits below).
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1e9

# PCIe x16 per direction, from the PCI-SIG rates after 128b/130b encoding: Gen3 8 GT/s ~15.8 GB/s, Gen4
# ~31.5 GB/s, Gen5 ~63 GB/s. Assumption: loading a checkpoint reaches half of it (pageable host memory,
# safetensors deserialization, one stream per GPU).
PCIE_X16_BYTES_PER_SECOND = {3: 15.8 * GB, 4: 31.5 * GB, 5: 63.0 * GB}
PCIE_LOAD_EFFICIENCY = 0.5  # assumption
# PCIe generation of each GPU's host link (NVIDIA product briefs): Hopper and Blackwell boards Gen5, Ampere
# and Ada Gen4, Volta and Turing Gen3.
PCIE_GENERATION = {
    "NVIDIA H100": 5,
    "NVIDIA H200": 5,
    "NVIDIA B200": 5,
    "NVIDIA A100": 4,
    "NVIDIA A10G": 4,
    "NVIDIA L4": 4,
    "NVIDIA L40S": 4,
    "NVIDIA V100": 3,
    "NVIDIA T4": 3,
}

# Assumption: containerd fetches an image's layers three at a time (its default max_concurrent_downloads)
# but decompresses each gzip layer on one core, ~200 MB/s in all, well below the NIC of any GPU instance.
IMAGE_PULL_BYTES_PER_SECOND = 0.2 * GB
# Assumption: one pod reading weights from S3 with parallel ranged GETs (s5cmd, Mountpoint, the AWS CRT)
# reaches ~10 Gb/s; S3 documents ~85-90 MB/s per connection and up to 100 Gb/s per instance with many
# ("Performance guidelines for Amazon S3").
OBJECT_STORAGE_BYTES_PER_SECOND = 1.25 * GB
# Assumption: an in-cluster cache (FSx for Lustre, a node-local NVMe cache) serves one client ~2 GB/s.
CLUSTER_CACHE_BYTES_PER_SECOND = 2.0 * GB
# Assumption: vLLM's start-up after the weights are loaded (CUDA graph capture, KV cache profiling).
WARM_UP_SECONDS = 30.0


@dataclass(frozen=True)
class Bandwidths:
    image_pull: float
    object_storage: float
    cluster_cache: float
    gpu_load: float


def gpu_load_bandwidth(gpu_product: str) -> float:
    """Host-to-GPU loading rate for a GPU named as NVML does ("NVIDIA H100 80GB HBM3"); Gen4 if unknown."""
    generation = next((g for name, g in PCIE_GENERATION.items() if gpu_product.startswith(name)), 4)
    return PCIE_X16_BYTES_PER_SECOND[generation] * PCIE_LOAD_EFFICIENCY


def suggested_bandwidths(network_gbps: float, gpu_product: str) -> Bandwidths:
    """The defaults above, none faster than the node's network (``network_gbps``, as in the catalog)."""
    nic = network_gbps * GB / 8
    return Bandwidths(
        min(IMAGE_PULL_BYTES_PER_SECOND, nic),
        min(OBJECT_STORAGE_BYTES_PER_SECOND, nic),
        min(CLUSTER_CACHE_BYTES_PER_SECOND, nic),
        gpu_load_bandwidth(gpu_product),
    )
