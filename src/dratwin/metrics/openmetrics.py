"""OpenMetrics text with timestamps, in the shape ``promtool tsdb create-blocks-from openmetrics`` backfills.

What the format and Prometheus' backfill require, and this writer guarantees:

- every family is written once, as one group: ``# HELP``, ``# TYPE``, then all its samples (series of
  several ``MetricsSet``\\ s that share a family, such as the variants of one run, are merged into it);
- every sample has a timestamp, in seconds since the Unix epoch (backfill rejects a sample without one);
- within a series, timestamps strictly increase (the TSDB drops out-of-order samples: a later sample at
  the same time replaces the earlier one here);
- a counter family ``x`` has samples named ``x_total``;
- label values escape backslash, double quote and newline; the text ends with ``# EOF``.

Families, and the series in them, come out sorted, so the same model always gives the same bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from dratwin.metrics.model import DCGM_FIELDS, DRATWIN_FIELDS, MetricField, MetricsSet, Sample

_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*\Z")
_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")

Labels = tuple[tuple[str, str], ...]


class MetricsModelError(ValueError):
    """A series the writer cannot express: an unknown family or a label name OpenMetrics does not allow."""


def render_openmetrics(sets: MetricsSet | Sequence[MetricsSet]) -> str:
    """The whole OpenMetrics text of ``sets``."""
    return "".join(openmetrics_lines(sets))


def write_openmetrics(sets: MetricsSet | Sequence[MetricsSet], path: Path) -> int:
    """Write the text to ``path``; returns the number of samples written."""
    written = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for line in openmetrics_lines(sets):
            if not line.startswith("#"):
                written += 1
            out.write(line)
    return written


def openmetrics_lines(sets: MetricsSet | Sequence[MetricsSet]) -> Iterator[str]:
    """The text line by line (each line ends with a newline)."""
    families = _gather(sets if isinstance(sets, Sequence) else [sets])
    for name in sorted(families):
        field, series = families[name]
        yield f"# HELP {name} {_escape_help(field.help)}\n"
        yield f"# TYPE {name} {field.type}\n"
        sample_name = f"{name}_total" if field.type == "counter" else name
        for labels in sorted(series):
            label_text = _label_text(labels)
            for time, value in sorted(series[labels].items()):
                yield f"{sample_name}{label_text} {format_number(value)} {format_number(time)}\n"
    yield "# EOF\n"


def _gather(sets: Iterable[MetricsSet]) -> dict[str, tuple[MetricField, dict[Labels, dict[float, float]]]]:
    """Family name → (its field, labelset → {unix time: value}); equal labelsets merge into one series."""
    families: dict[str, tuple[MetricField, dict[Labels, dict[float, float]]]] = {}

    def add(field: MetricField, labels: list[tuple[str, str]], samples: Iterable[Sample], start: float) -> None:
        _check_labels(field.name, labels)
        _, series = families.setdefault(field.name, (field, {}))
        points = series.setdefault(tuple(labels), {})
        for sample in samples:
            points[start + sample.time] = sample.value

    for metrics in sets:
        extra = list(metrics.labels)
        for device_series in metrics.device_series:
            add(
                DCGM_FIELDS[device_series.field],
                device_series.labels() + extra,
                device_series.samples,
                metrics.start_unix,
            )
        for cluster in metrics.cluster_series:
            field = DRATWIN_FIELDS.get(cluster.field)
            if field is None:
                known = ", ".join(sorted(DRATWIN_FIELDS))
                raise MetricsModelError(f"cluster series {cluster.field!r} is not a dratwin metric (known: {known})")
            add(field, list(cluster.labels) + extra, cluster.samples, metrics.start_unix)
    return families


def _check_labels(family: str, labels: list[tuple[str, str]]) -> None:
    if not _METRIC_NAME.match(family):
        raise MetricsModelError(f"metric name {family!r} is not a valid OpenMetrics name")
    seen: set[str] = set()
    for name, _ in labels:
        if not _LABEL_NAME.match(name) or name.startswith("__"):
            raise MetricsModelError(
                f"{family}: label name {name!r} is not allowed (letters, digits and _, not starting with a digit or __)"
            )
        if name in seen:
            raise MetricsModelError(
                f"{family}: label {name!r} is given twice (does a MetricsSet label repeat a series label?)"
            )
        seen.add(name)


def _label_text(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{name}="{escape_label_value(value)}"' for name, value in labels) + "}"


def escape_label_value(value: str) -> str:
    """OpenMetrics' escapes in a label value: backslash, double quote and line feed."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_number(number: float) -> str:
    """A value or timestamp as OpenMetrics writes numbers: integers without a fraction, NaN and ±Inf by name."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    if float(number).is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(float(number))
