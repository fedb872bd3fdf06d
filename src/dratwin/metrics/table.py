"""The metrics as one long table for notebooks: a row per sample, a column per label.

Columns: ``time_s`` (seconds since the start of the run), ``timestamp`` (Unix seconds), ``metric`` (the
family name), ``value``, then one column per label name in use (dcgm-exporter's first, in its order,
then the others sorted); a label a series does not have is empty. CSV needs nothing more; Parquet needs
pyarrow (``pip install 'dratwin[parquet]'``).
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from dratwin.errors import DratwinError
from dratwin.metrics.model import MetricsSet

TableFormat = Literal["csv", "parquet"]

FIXED_COLUMNS = ("time_s", "timestamp", "metric", "value")
_EXPORTER_LABELS = (
    "gpu",
    "UUID",
    "pci_bus_id",
    "device",
    "modelName",
    "GPU_I_PROFILE",
    "GPU_I_ID",
    "Hostname",
    "pod",
    "namespace",
    "container",
)

Row = tuple[float, float, str, float, dict[str, str]]


class TableFormatUnavailable(DratwinError):
    """Parquet was asked for where pyarrow is not installed."""


def table_format_for(path: Path) -> TableFormat:
    """The format a file name asks for: ``.parquet`` (or ``.pq``) is Parquet, anything else CSV."""
    return "parquet" if path.suffix.lower() in (".parquet", ".pq") else "csv"


def _samples(sets: Sequence[MetricsSet]) -> Iterator[Row]:
    for metrics in sets:
        extra = dict(metrics.labels)
        for device in metrics.device_series:
            labels = dict(device.labels()) | extra
            for sample in device.samples:
                yield sample.time, metrics.start_unix + sample.time, device.field, sample.value, labels
        for cluster in metrics.cluster_series:
            labels = dict(cluster.labels) | extra
            for sample in cluster.samples:
                yield sample.time, metrics.start_unix + sample.time, cluster.field, sample.value, labels


def table_columns(sets: Sequence[MetricsSet]) -> list[str]:
    """The table's columns for ``sets``."""
    names: set[str] = set()
    for metrics in sets:
        names.update(name for name, _ in metrics.labels)
        for device in metrics.device_series:
            names.update(name for name, _ in device.labels())
        for cluster in metrics.cluster_series:
            names.update(name for name, _ in cluster.labels)
    exporter = [name for name in _EXPORTER_LABELS if name in names]
    return [*FIXED_COLUMNS, *exporter, *sorted(names - set(exporter))]


def table_rows(sets: MetricsSet | Sequence[MetricsSet]) -> tuple[list[str], list[list[Any]]]:
    """The columns and rows, sorted by metric, then time, then labels (a stable order for diffs)."""
    chosen = [sets] if isinstance(sets, MetricsSet) else list(sets)
    columns = table_columns(chosen)
    label_columns = columns[len(FIXED_COLUMNS) :]
    rows = [
        [time, timestamp, metric, value, *(labels.get(name, "") for name in label_columns)]
        for time, timestamp, metric, value, labels in _samples(chosen)
    ]
    rows.sort(key=lambda row: (row[2], row[0], row[4:]))
    return columns, rows


def write_table(sets: MetricsSet | Sequence[MetricsSet], path: Path, table_format: TableFormat | None = None) -> int:
    """Write the table to ``path`` (format from the suffix unless given); returns the number of rows."""
    chosen = table_format or table_format_for(path)
    columns, rows = table_rows(sets)
    if chosen == "parquet":
        _write_parquet(columns, rows, path)
    else:
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            writer.writerows(rows)
    return len(rows)


def _write_parquet(columns: list[str], rows: list[list[Any]], path: Path) -> None:
    try:
        arrow: Any = importlib.import_module("pyarrow")
        parquet: Any = importlib.import_module("pyarrow.parquet")
    except ImportError as missing:
        raise TableFormatUnavailable(
            f"{path}: writing Parquet needs pyarrow, which is not installed; "
            "install it with `pip install 'dratwin[parquet]'`, or name a .csv file instead"
        ) from missing
    numeric = {"time_s", "timestamp", "value"}
    arrays = {
        name: arrow.array([row[i] for row in rows], type=arrow.float64() if name in numeric else arrow.string())
        for i, name in enumerate(columns)
    }
    parquet.write_table(arrow.table(arrays), str(path))
