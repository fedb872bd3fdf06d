"""Cold-start settings for the tests: round sizes and bandwidths so that times are easy to read."""

from __future__ import annotations

from typing import Any

from dratwin.coldstart import ColdStartModel, ColdStartSettings

GB = 10**9
IMAGE = "vllm/vllm-openai:v0.9.0"
MODEL = "ml/llama-8b"


def settings(**changes: Any) -> ColdStartSettings:
    """A 2 GB image at 0.2 GB/s (10 s), 16 GB of weights from S3 at 1.6 GB/s (10 s) or from the cache at
    3.2 GB/s (5 s), loaded into the GPU at 16 GB/s (1 s), 30 s of warm-up."""
    values: dict[str, Any] = {
        "image_bytes": {IMAGE: 2 * GB},
        "default_image_bytes": 1 * GB,
        "node_image_bandwidth": 0.2 * GB,
        "model_bytes": {MODEL: 16 * GB},
        "object_storage_bandwidth": 1.6 * GB,
        "cluster_cache": False,
        "cluster_cache_bandwidth": 3.2 * GB,
        "gpu_load_bandwidth": 16 * GB,
        "warm_up_seconds": 30.0,
    }
    values.update(changes)
    return ColdStartSettings(**values)


def cold_start_model(**changes: Any) -> ColdStartModel:
    return ColdStartModel(settings(**changes))
