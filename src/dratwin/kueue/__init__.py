"""Kueue in the twin: the Workloads Kueue makes from jobs, their quota usage, and its admission decisions.

Pure cores over the typed views of :mod:`dratwin.api.kueue`: :mod:`.jobs` (the Workload of a Job, a pod
group, a StatefulSet or a Deployment's pods, named and owned as Kueue's job framework does, and what Kueue
changes in a job when it suspends and admits it), :mod:`.usage` (a PodSet's quota usage, DRA devices
included), :mod:`.admission` (flavor assignment, quota, borrowing and the scheduling cycle), :mod:`.tas`
(topology-aware scheduling: domains from node labels, the assignment, its hooks in flavor assignment),
:mod:`.preemption` (which admitted Workloads Kueue evicts so that a pending one fits).
"""
