"""The Alibaba GPU cluster trace format (``cluster-trace-gpu-v2023``, the FGD paper's "openb" data).

Two kinds of CSV file with a header row:

- a node list: ``sn, cpu_milli, memory_mib, gpu, model`` (an empty ``model`` is a CPU-only node);
- a pod list: ``name, cpu_milli, memory_mib, num_gpu, gpu_milli`` and, in the full schema, ``gpu_spec``
  (allowed GPU models separated by ``|``, empty for any), ``qos``, ``pod_phase`` and the times
  ``creation_time``, ``deletion_time``, ``scheduled_time`` in seconds from the start of the trace.
  Some published variants (the ``multigpu*`` lists) have only the first five columns.

``gpu_milli`` is the share of one GPU that a GPU-sharing pod asks for (0-1000; 1000 is a whole GPU).
Reading is strict: a missing column, a value that is not a whole number or a row of the wrong width is
an :class:`~dratwin.errors.InputError` naming the file, line and column.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from dratwin.errors import InputError
from dratwin.gpushare.fragmentation import MILLI  # gpu_milli of a whole GPU

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_OPTIONAL_COLUMNS = ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")

R = TypeVar("R")


@dataclass(frozen=True)
class AlibabaNode:
    """One machine of the trace: CPU in millicores, memory in MiB, its GPUs and their model."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True)
class AlibabaPod:
    """One task of the trace; times are seconds from the start (``None`` where the file has no times)."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...] = ()
    qos: str = ""
    phase: str = ""
    creation_time: int | None = None
    deletion_time: int | None = None
    scheduled_time: int | None = None

    @property
    def is_gpu_sharing(self) -> bool:
        """A pod that asks for a fraction of one GPU."""
        return self.num_gpu == 1 and 0 < self.gpu_milli < MILLI


def read_nodes(path: str | Path) -> list[AlibabaNode]:
    """The node list of a trace."""
    return list(_read(Path(path), NODE_COLUMNS, (), _node))


def read_pods(path: str | Path) -> list[AlibabaPod]:
    """The pod list of a trace, in file order."""
    return list(_read(Path(path), POD_COLUMNS, POD_OPTIONAL_COLUMNS, _pod))


MAX_VALUE = 10**15


class _Row:
    """One CSV row with its place, so that every bad value says where it is."""

    def __init__(self, path: Path, line: int, values: dict[str, str]) -> None:
        self.path, self.line, self.values = path, line, values

    def text(self, column: str) -> str:
        return self.values.get(column, "").strip()

    def integer(self, column: str) -> int:
        value = self.text(column)
        try:
            number = int(value)
        except ValueError:
            raise InputError(
                f"{self.path}:{self.line}: column {column}: {value!r} is not a whole number"
            ) from None
        if abs(number) > MAX_VALUE:  # the replay counts in 64-bit integers
            raise InputError(f"{self.path}:{self.line}: column {column}: {value} is out of range "
                             f"(at most {MAX_VALUE:,}: millicores, MiB and GPUs of one node or pod)")
        return number

    def optional_integer(self, column: str) -> int | None:
        return self.integer(column) if self.text(column) else None


def _node(row: _Row) -> AlibabaNode:
    return AlibabaNode(
        name=row.text("sn"),
        cpu_milli=row.integer("cpu_milli"),
        memory_mib=row.integer("memory_mib"),
        gpus=row.integer("gpu"),
        model=row.text("model"),
    )


def _pod(row: _Row) -> AlibabaPod:
    spec = row.text("gpu_spec")
    return AlibabaPod(
        name=row.text("name"),
        cpu_milli=row.integer("cpu_milli"),
        memory_mib=row.integer("memory_mib"),
        num_gpu=row.integer("num_gpu"),
        gpu_milli=row.integer("gpu_milli"),
        gpu_spec=tuple(part for part in spec.split("|") if part) if spec else (),
        qos=row.text("qos"),
        phase=row.text("pod_phase"),
        creation_time=row.optional_integer("creation_time"),
        deletion_time=row.optional_integer("deletion_time"),
        scheduled_time=row.optional_integer("scheduled_time"),
    )


def _read(
    path: Path, required: Sequence[str], optional: Sequence[str], make: Callable[[_Row], R]
) -> Iterator[R]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = [column.strip() for column in next(reader, [])]
            _check_header(path, header, required, optional)
            for values in reader:
                if not values:
                    continue
                if len(values) != len(header):
                    raise InputError(
                        f"{path}:{reader.line_num}: {len(values)} values, the header has {len(header)} columns"
                    )
                yield make(_Row(path, reader.line_num, dict(zip(header, values, strict=True))))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read the trace: {error}") from error


def _check_header(path: Path, header: list[str], required: Sequence[str], optional: Sequence[str]) -> None:
    missing = [column for column in required if column not in header]
    if missing:
        raise InputError(
            f"{path}:1: not an Alibaba GPU trace file: missing column(s) {', '.join(missing)} "
            f"(expected a header with {', '.join(required)})"
        )
    unknown = [column for column in header if column not in required and column not in optional]
    if unknown:
        known = ", ".join((*required, *optional))
        raise InputError(f"{path}:1: unknown column(s) {', '.join(unknown)}; known: {known}")
