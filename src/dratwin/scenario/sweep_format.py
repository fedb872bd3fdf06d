"""The ``kind: Sweep`` file format (``apiVersion: dratwin.io/v1alpha1``), as msgspec types.

A sweep names a base scenario (a file, or a whole ``kind: Scenario`` document inline) and axes: lists of
values for what a scenario's variants override. It expands into the cartesian product of the axes, each
combination run with every seed. Like :mod:`dratwin.scenario.format`, these types are the format's single
definition: the structure check walks a file against them, msgspec decodes it, and
:mod:`dratwin.scenario.sweep_axes` judges the values.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from dratwin.scenario import format as fmt

KIND = "Sweep"


class _Base(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """As the scenario format's types: camelCase names, unknown fields refused."""


class Fleet(_Base, kw_only=True):
    """The generated nodes of one fleet: ``spec.cluster.generate`` of the scenario, replaced."""

    name: str
    generate: list[fmt.GenerateEntry]


class Axes(_Base, kw_only=True):
    """Every axis is optional; an axis left out keeps what the scenario says."""

    variant: list[str] = []  # the base scenario's own variants to run (default: all of them)
    gpu_manager: list[fmt.DeviceManager] = []
    sharing: list[Literal["whole"] | fmt.Sharing] = []
    scoring: list[str] = []
    fleet: list[Fleet] = []
    autoscaler_target: list[float] = []  # percent, over every service's autoscaler
    autoscaler_metric: list[fmt.AutoscalerMetric] = []
    arrival_rate_scale: list[float] = []  # times the Poisson and diurnal arrival rates of the workloads


class SweepSpec(_Base, kw_only=True):
    scenario: str | dict[str, Any]  # a file relative to the sweep, or a kind: Scenario document
    axes: Axes = msgspec.field(default_factory=Axes)
    seeds: list[int] = []  # default: the scenario's


class SweepFile(_Base, kw_only=True):
    api_version: str
    kind: str
    metadata: fmt.Metadata
    spec: SweepSpec
