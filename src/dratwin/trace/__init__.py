"""Workload traces: recorded clusters and pod lists that a simulation can replay."""

from dratwin.trace.alibaba import AlibabaNode, AlibabaPod, read_nodes, read_pods

__all__ = ["AlibabaNode", "AlibabaPod", "read_nodes", "read_pods"]
