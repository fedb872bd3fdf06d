"""How an inference server turns load into the metrics DCGM and the kubelet report.

A deliberately simple model; every constant is an input with a documented default:

- GPU utilization (``DCGM_FI_DEV_GPU_UTIL``, percent): the fraction of time the GPU runs a kernel, taken
  as the fraction of the replica's throughput in use (served / capacity). DCGM reports it per physical
  GPU, not per MIG instance: on MIG it is absent (NVIDIA/dcgm-exporter#105, #216: use the profiling
  metrics there), and on a time-sliced GPU every pod on it sees the device's value.
- SM active and tensor-pipe active (``DCGM_FI_PROF_SM_ACTIVE``, ``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE``,
  ratios 0–1, reported per GPU and per MIG instance): a fixed fraction of the busy time.
  Assumption: LLM decoding is memory-bound, so SMs hold warps for most but not all of the busy time
  (``sm_active_per_busy`` 0.75) and the tensor pipes are active for a minority of it
  (``tensor_active_per_busy`` 0.30). Set them from a profile of your own server when you have one.
- Framebuffer used (``DCGM_FI_DEV_FB_USED``, MiB): vLLM reserves ``gpu_memory_utilization`` (default
  0.9, vLLM engine arguments) of the memory it sees at start-up for weights, activations and KV cache,
  whatever the load; with ``preallocate`` off the KV cache grows with load instead:
  weights + busy × (reserved − weights).
- CPU utilization (percent of the container's CPU request, what the HPA's CPU metric reads): a base
  while idle plus a share proportional to the served load. Assumption: 10 % idle (the server's event
  loop, health checks), 60 % at full throughput (tokenization and scheduling on the CPU side).
"""

from __future__ import annotations

from dataclasses import dataclass

VLLM_GPU_MEMORY_UTILIZATION = 0.9  # vLLM engine argument --gpu-memory-utilization, default
SM_ACTIVE_PER_BUSY = 0.75  # assumption, see the module docstring
TENSOR_ACTIVE_PER_BUSY = 0.30  # assumption
CPU_IDLE_PERCENT = 10.0  # assumption
CPU_FULL_LOAD_PERCENT = 60.0  # assumption
MIB = 1024 * 1024


@dataclass(frozen=True)
class ServingProfile:
    model_bytes: int = 0  # the weights in GPU memory
    memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION
    preallocate: bool = True
    sm_active_per_busy: float = SM_ACTIVE_PER_BUSY
    tensor_active_per_busy: float = TENSOR_ACTIVE_PER_BUSY
    cpu_idle_percent: float = CPU_IDLE_PERCENT
    cpu_full_load_percent: float = CPU_FULL_LOAD_PERCENT

    def framebuffer_bytes(self, memory_bytes: int, busy: float) -> int:
        """What the server holds in the memory it sees (``memory_bytes``; 0 when unknown: the weights)."""
        if memory_bytes <= 0:
            return self.model_bytes
        reserved = max(self.model_bytes, int(self.memory_utilization * memory_bytes))
        if self.preallocate:
            return reserved
        return self.model_bytes + int(busy * (reserved - self.model_bytes))

    def cpu_percent(self, busy: float) -> float:
        return self.cpu_idle_percent + (self.cpu_full_load_percent - self.cpu_idle_percent) * busy


def mig_compute_fraction(profile: str, compute_slices: int = 7) -> float:
    """The share of a GPU's compute a MIG profile holds: ``3g.40gb`` is 3 of the GPU's compute slices
    (NVIDIA MIG user guide: 7 on A100, H100, H200 and B200; pass 4 for A30)."""
    head = profile.split(".", 1)[0]
    if not head.endswith("g") or not head[:-1].isdigit():
        raise ValueError(f"not a MIG profile name: {profile!r} (expected e.g. 1g.10gb)")
    slices = int(head[:-1])
    if not 1 <= slices <= compute_slices:
        raise ValueError(f"MIG profile {profile!r} has {slices} compute slices of {compute_slices}")
    return slices / compute_slices
