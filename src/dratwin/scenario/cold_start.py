"""The cold start of a pod in four steps, and the defaults used where a scenario says nothing.

A pod's containers start only after: (1) its image is pulled to the node (image size / the node's pull
bandwidth; a node pulls an image once and keeps it), (2) its model weights are fetched from object storage
(model size / bandwidth; with the cluster cache on, from the in-cluster cache instead, and the pod is created
only once its data is cached: the LADF pattern), (3) the weights are loaded into GPU memory (model size / the
host-to-GPU bandwidth), (4) the server warms up (a fixed time).

The defaults are order-of-magnitude estimates for an EKS GPU node, stated with what they rest on, to be
replaced by a scenario's own measurements (``spec.coldStart``):

=========================== ============ =====================================================================
field                       default      why
=========================== ============ =====================================================================
``defaultImageSize``        8Gi          CUDA inference and training images (vLLM's OpenAI server, NGC
                                         PyTorch) are several GB compressed; their layers are mostly CUDA
                                         and framework libraries
``imagePullBandwidth``      125Mi/s      unpacking layers writes the root volume: the baseline throughput
                                         of an EBS gp3 volume (the Karpenter / Auto Mode default) is 125 MiB/s
``models``                  none (0)     weights depend on the model: about 2 bytes per parameter in
                                         BF16 (an 8B-parameter model is about 16 GB), so they must be given
``objectStorageBandwidth``  1Gi/s        parallel ranged GETs from S3 (the AWS CRT, s5cmd) on a 100 Gbps
                                         instance; one stream alone reaches far less (~90 MB/s)
``clusterCache``            false        the LADF pattern is opt-in
``clusterCacheBandwidth``   2Gi/s        an in-cluster cache or FSx for Lustre read over the node's network
``gpuLoadBandwidth``        10Gi/s       host-to-device copies over PCIe Gen4/Gen5 x16 (32/64 GB/s peak)
                                         less deserialization of the weight files
``warmUp``                  30s          an inference server's start-up after loading (vLLM captures CUDA
                                         graphs and profiles memory); a training job's first step
=========================== ============ =====================================================================
"""

from __future__ import annotations

GIB = 1024**3
MIB = 1024**2

DEFAULT_IMAGE_BYTES = 8 * GIB
DEFAULT_IMAGE_PULL_BANDWIDTH = 125.0 * MIB
DEFAULT_OBJECT_STORAGE_BANDWIDTH = 1.0 * GIB
DEFAULT_CLUSTER_CACHE_BANDWIDTH = 2.0 * GIB
DEFAULT_GPU_LOAD_BANDWIDTH = 10.0 * GIB
DEFAULT_WARM_UP_SECONDS = 30.0
