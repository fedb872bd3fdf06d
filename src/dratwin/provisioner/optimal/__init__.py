"""The cost-optimal fleet for a set of pending pods: an exact per-node MILP solved by HiGHS.

A pure solver: no I/O, no cluster objects. The caller turns pods into :class:`PodGroup` (identical pods,
requests in abstract integer dimensions), instance types (or type × offering) into :class:`NodeOption`
and the free capacity of the cluster into :class:`ExistingNode`, then calls :func:`solve_optimal`::

    >>> gpu = "device:gpu.nvidia.com"
    >>> fleet = solve_optimal(
    ...     [PodGroup("train", 3, {gpu: 1, "pods": 1})],
    ...     [NodeOption("x4", 10.0, {gpu: 4, "pods": 110}), NodeOption("x1", 4.0, {gpu: 1, "pods": 110})],
    ... )
    >>> fleet.status, fleet.cost_per_hour, fleet.nodes
    ('optimal', 10.0, {'x4': 1})

Dimensions are free-form names (``cpu`` in millicores, ``memory`` in bytes, ``pods``, extended resources,
``device:<class>`` = number of devices of that class); a dimension that a capacity does not name is 0 there.

Aggregating per option ("Σ requests ≤ Σ capacity of the option's nodes") is not exact for bin packing: the
free capacity left on many nodes is pooled into pods that fit no single node. Both models here are per node:

1. **Pattern form** (Dantzig–Wolfe of the per-node model). A pattern is how many pods of each group one node
   of an option carries; integer ``λ[o,p]`` nodes are launched with it. Column generation solves its LP
   relaxation (pricing: per option, the most valuable pattern under the demand duals, a small knapsack MILP,
   greedy first) and gives the lower bound, valid at every round priced exactly for every option
   (``z_LP + Σ_o U_o·min(0, least reduced cost of o)``). The integer program over the generated patterns then
   gives a fleet, node by node. When its cost meets the bound (within ``rel_gap``) it is proved optimal.
2. **Compact per-node model**, run only if step 1 proved nothing and it has at most ``max_columns`` columns:
   for every option ``o`` node slots ``k = 1..U_o`` with binary ``y[o,k]``, integer ``x[g,o,k]`` (pods of
   group ``g`` on the slot), a capacity row per slot and dimension, symmetry breaking ``y[o,k] ≥ y[o,k+1]``,
   existing nodes as free slots. HiGHS's branch and bound proves optimality on small instances.

Both have existing nodes as free capacity, NodePool-style limits as rows over the summed ``limit_capacity`` of
launched nodes, ``max_count`` and, only when first fit could not place every pod, integer ``u[g]`` unplaced
pods with a penalty larger than any fleet's cost: the models are always feasible and place as many pods as
possible, then minimise Σ price.

Model size is kept in check by grouping identical pods (integer counts, not one variable per pod), by
dropping dominated options (another option without ``max_count``, at most as expensive, with at least the
capacity, the groups and no more limit usage), and by capping ``U_o`` by what an optimal fleet can need: at
most ``max_count`` and what the limits allow, the first-fit-decreasing count of nodes of ``o`` alone that hold
every pod allowed on ``o`` (an optimal fleet's pods on ``o`` can be repacked into that many), and
``cost(best fleet) / price_o``.

:func:`first_fit_decreasing` is the quick feasible fleet that sizes ``U_o``, the incumbent the solvers must
beat, and the answer when highspy is not installed or time runs out first. Every fleet returned has passed
:func:`verify_fleet`.
"""

from dratwin.provisioner.optimal.model import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_REL_GAP,
    DEFAULT_TIME_LIMIT,
    ExistingNode,
    FleetInputError,
    NodeOption,
    OptimalFleet,
    PodGroup,
    Status,
)
from dratwin.provisioner.optimal.solve import first_fit_decreasing, solve_optimal
from dratwin.provisioner.optimal.verify import verify_fleet

__all__ = [
    "DEFAULT_MAX_COLUMNS",
    "DEFAULT_REL_GAP",
    "DEFAULT_TIME_LIMIT",
    "ExistingNode",
    "FleetInputError",
    "NodeOption",
    "OptimalFleet",
    "PodGroup",
    "Status",
    "first_fit_decreasing",
    "solve_optimal",
    "verify_fleet",
]
