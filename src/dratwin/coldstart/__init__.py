"""Cold start of pods: image pull with per-node image caches, model weights from object storage or an
in-cluster cache (the LADF pattern), loading into GPU memory, warm-up. Pure: the time is an argument."""

from dratwin.coldstart.defaults import Bandwidths, gpu_load_bandwidth, suggested_bandwidths
from dratwin.coldstart.model import ColdStart, ColdStartModel, ColdStartSettings, StartAnswer

__all__ = [
    "Bandwidths",
    "ColdStart",
    "ColdStartModel",
    "ColdStartSettings",
    "StartAnswer",
    "gpu_load_bandwidth",
    "suggested_bandwidths",
]
