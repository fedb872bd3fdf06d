"""GPU and cluster metrics over time, and the files users read them in.

The model (``model``) is plain data: series of (time, value) samples with their labels, filled by whoever
runs the cluster through time. The writers turn it into OpenMetrics text that Prometheus' backfill accepts
(``openmetrics``) and into a long table for notebooks, CSV or Parquet (``table``).
"""

from __future__ import annotations

from dratwin.metrics.model import (
    DCGM_FIELDS,
    DRATWIN_FIELDS,
    ClusterSeries,
    DcgmField,
    DeviceIdentity,
    DeviceSeries,
    MetricField,
    MetricsSet,
    PodRef,
    Sample,
)
from dratwin.metrics.openmetrics import render_openmetrics, write_openmetrics
from dratwin.metrics.table import TableFormat, table_rows, write_table

__all__ = [
    "DCGM_FIELDS",
    "DRATWIN_FIELDS",
    "ClusterSeries",
    "DcgmField",
    "DeviceIdentity",
    "DeviceSeries",
    "MetricField",
    "MetricsSet",
    "PodRef",
    "Sample",
    "TableFormat",
    "render_openmetrics",
    "table_rows",
    "write_openmetrics",
    "write_table",
]
