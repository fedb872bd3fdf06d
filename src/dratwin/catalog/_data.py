"""Reading the data files packaged in ``dratwin/data`` (see its SOURCES.md) through importlib.resources."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml

from dratwin.errors import InputError

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML was built with it

DATA_FILES = (
    "aws-accelerated-instances.yaml",
    "aws-general-instances.yaml",
    "aws-previous-gpu-instances.yaml",
    "dranet-efas.yaml",
    "aws-ultraservers.yaml",
    "karpenter-dra-instance-device-metadata.yaml",
    "karpenter-instance-types.yaml",
    "neuron-devices.yaml",
    "nvidia-gpus.yaml",
    "resourceslice-p4d.24xlarge-static-mig.yaml",
    "resourceslice-p5.48xlarge.yaml",
)


def data_text(name: str) -> str:
    """The text of a packaged data file; InputError when the installation lacks it."""
    try:
        return resources.files("dratwin").joinpath("data", name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as error:
        raise InputError(f"packaged data file dratwin/data/{name} is missing; reinstall dratwin") from error


@functools.cache
def data_yaml(name: str) -> Any:
    """The first YAML document of a packaged data file (parsed once per process)."""
    return yaml.load(data_text(name), Loader=_Loader)


@functools.cache
def data_yaml_all(name: str) -> tuple[Any, ...]:
    """Every YAML document of a packaged data file (parsed once per process), without empty documents."""
    return tuple(doc for doc in yaml.load_all(data_text(name), Loader=_Loader) if doc is not None)
