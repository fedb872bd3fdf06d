"""Kueue's topology-aware scheduling (TAS), pure: no I/O, no clock.

:mod:`.request` (a PodSet's topology request from its pod template's annotations), :mod:`.domains` (the
topology domains of a TAS flavor from node labels, and each leaf's free capacity), :mod:`.assign` (the
assignment algorithm and its "cannot fit" messages), :mod:`.encoding` (the compact v1beta2
``topologyAssignment`` and the node selector each pod gets when Kueue ungates it), :mod:`.admission`
(the hooks in flavor assignment and in the scheduling cycle) and :mod:`.shapes` (the cluster of Kueue's
``tas`` performance test).

This package's ``__init__`` imports nothing: :mod:`dratwin.kueue.flavors` imports :mod:`.assign`, and
:mod:`.admission` imports :mod:`dratwin.kueue.flavors`.
"""
