"""The table for notebooks: CSV columns and rows, Parquet with pyarrow, a clear message without it."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from tests.builders.metrics import START, busy_fleet, cluster, gpu_util, h100, metrics_set

from dratwin.metrics import write_table
from dratwin.metrics.table import TableFormatUnavailable, table_format_for, table_rows


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_csv_has_the_fixed_columns_then_the_exporters_labels_then_the_others(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    write_table(busy_fleet(variant="dra"), path)
    header = path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == [
        "time_s",
        "timestamp",
        "metric",
        "value",
        "gpu",
        "UUID",
        "pci_bus_id",
        "device",
        "modelName",
        "Hostname",
        "pod",
        "namespace",
        "container",
        "variant",
    ]


def test_csv_rows_carry_each_sample_with_its_labels(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    model = metrics_set(
        gpu_util(h100(0), [(60, 50.0), (0, 10.0)], pod=("ml", "train-0")),
        cluster("dratwin_pending_pods", [(0, 3.0)]),
    )
    count = write_table(model, path)
    rows = read_csv(path)
    assert count == len(rows) == 3
    assert [(r["metric"], float(r["time_s"]), float(r["value"])) for r in rows] == [
        ("DCGM_FI_DEV_GPU_UTIL", 0.0, 10.0),
        ("DCGM_FI_DEV_GPU_UTIL", 60.0, 50.0),
        ("dratwin_pending_pods", 0.0, 3.0),
    ]
    assert float(rows[1]["timestamp"]) == START + 60
    assert (rows[0]["pod"], rows[0]["namespace"], rows[0]["Hostname"]) == ("train-0", "ml", "p5-node-1")
    assert (rows[2]["pod"], rows[2]["Hostname"]) == ("", "")


def test_every_sample_becomes_one_row() -> None:
    model = busy_fleet(nodes=3, gpus=2, steps=4)
    expected = sum(len(s.samples) for s in model.device_series) + sum(len(s.samples) for s in model.cluster_series)
    _, rows = table_rows(model)
    assert len(rows) == expected


SUFFIX_CASES = {"csv": ("m.csv", "csv"), "parquet": ("m.parquet", "parquet"), "pq": ("M.PQ", "parquet")}


@pytest.mark.parametrize(("name", "chosen"), SUFFIX_CASES.values(), ids=SUFFIX_CASES.keys())
def test_the_file_name_chooses_the_format(name: str, chosen: str) -> None:
    assert table_format_for(Path(name)) == chosen


def test_parquet_reads_back_with_pyarrow(tmp_path: Path) -> None:
    import pyarrow.parquet as parquet  # a dev dependency, so the Parquet path is always tested
    path = tmp_path / "metrics.parquet"
    model = busy_fleet(variant="dra")
    write_table(model, path)
    table = parquet.read_table(str(path))
    columns, rows = table_rows(model)
    assert table.column_names == columns
    assert table.num_rows == len(rows)
    assert table.column("value").to_pylist() == [row[3] for row in rows]
    assert str(table.schema.field("time_s").type) == "double"


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import fail as it does where pyarrow is not installed.
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = tmp_path / "metrics.parquet"
    with pytest.raises(TableFormatUnavailable, match=r"pip install 'dratwin\[parquet\]'") as refused:
        write_table(busy_fleet(), path)
    assert str(path) in str(refused.value)
    assert not path.exists()
