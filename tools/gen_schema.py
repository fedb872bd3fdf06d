"""Regenerate src/dratwin/data/api-schema.json: the structure of every kind dratwin reads.

Run from the repository root with Go on the PATH (development only; the output is committed):

    python tools/gen_schema.py

- Built-in kinds (core, apps, batch, resource.k8s.io v1/v1beta2/v1beta1) come from the Go types of the
  k8s.io/api module pinned in tools/schemagen/go.mod, walked by reflection (tools/schemagen/main.go): the
  exact fields and value types the API server's JSON decoder accepts.
- Kueue's Configuration (config.kueue.x-k8s.io v1beta2 and v1beta1) comes from its Go types in the
  sigs.k8s.io/kueue module (also pinned in tools/schemagen/go.mod), walked the same way.
- Karpenter's NodePool, NodeClaim (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1) come from the
  CRDs shipped in the github.com/aws/karpenter-provider-aws module (pkg/apis/crds), and NVIDIA's
  ComputeDomain (resource.nvidia.com/v1beta1) from the CRD of the NVIDIA DRA driver's chart in the
  sigs.k8s.io/dra-driver-nvidia-gpu module (the version the EKS guide installs), and Kueue's kinds
  (kueue.x-k8s.io v1beta2 and v1beta1) from the CRDs of the sigs.k8s.io/kueue module, all fetched from the Go
  module proxy by `go mod download`; their openAPIV3Schema is reduced to the same form, with the
  `required` lists the API server enforces for custom resources.

Format: ``types`` maps a type name to its fields (JSON name → value type); a value type is a scalar
(string, bool, int32, int64, float64, quantity, intOrString, time, duration, bytes, any), ``[]T`` (list),
``map[]T`` (object with arbitrary keys) or a type name. ``required`` lists, per CRD type, the fields the
schema requires. ``kinds`` maps ``apiVersion/kind`` to the type of the whole object.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "dratwin" / "data" / "api-schema.json"
KARPENTER_MODULE = "github.com/aws/karpenter-provider-aws"
KARPENTER_VERSION = "v1.14.3"
CRDS = ("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml")
NVIDIA_MODULE = "sigs.k8s.io/dra-driver-nvidia-gpu"
NVIDIA_VERSION = "v0.4.1"
NVIDIA_CRD_DIR = "deployments/helm/dra-driver-nvidia-gpu/crds"
NVIDIA_CRDS = ("resource.nvidia.com_computedomains.yaml",)
KUEUE_MODULE = "sigs.k8s.io/kueue"
KUEUE_VERSION = "v0.17.0"  # the one tools/schemagen/go.mod requires
KUEUE_CRD_DIR = "config/components/crd/bases"
KUEUE_CRDS = tuple(f"kueue.x-k8s.io_{plural}.yaml" for plural in (
    "resourceflavors", "clusterqueues", "localqueues", "cohorts", "workloadpriorityclasses", "admissionchecks",
    "topologies", "workloads"))
# (module, version, directory of the CRDs in the module, CRD files)
CRD_SOURCES = (
    (KARPENTER_MODULE, KARPENTER_VERSION, "pkg/apis/crds", CRDS),
    (NVIDIA_MODULE, NVIDIA_VERSION, NVIDIA_CRD_DIR, NVIDIA_CRDS),
    (KUEUE_MODULE, KUEUE_VERSION, KUEUE_CRD_DIR, KUEUE_CRDS),
)
# Fields of Kueue's Configuration newer than the module above (Kueue 0.19's counter- and capacity-based
# device class mappings, as the Configuration reference documents them), added to its v1beta2 types.
_CONFIG = "kueue-config/v1beta2."
KUEUE_CONFIG_ADDITIONS = {
    _CONFIG + "DeviceClassMapping": {"sources": f"[]{_CONFIG}DeviceClassMappingSource"},
    _CONFIG + "DeviceClassMappingSource": {"counter": f"{_CONFIG}DeviceSource", "capacity": f"{_CONFIG}DeviceSource"},
    _CONFIG + "DeviceSource": {"name": "string", "driver": "string", "deviceSelector": f"{_CONFIG}DeviceSourceSelector"},
    _CONFIG + "DeviceSourceSelector": {"cel": f"{_CONFIG}CELDeviceSelector"},
    _CONFIG + "CELDeviceSelector": {"expression": "string"},
}
# CRD fields whose schema is a built-in type inlined (type name suffix → the built-in type).
EMBEDDED = {".Workload.spec.podSets[].template": "core/v1.PodTemplateSpec"}


def builtin_schema() -> dict[str, Any]:
    text = subprocess.run(["go", "run", "."], cwd=ROOT / "tools" / "schemagen", check=True, capture_output=True,
                          text=True).stdout
    schema: dict[str, Any] = json.loads(text)
    return schema


def k8s_api_version() -> str:
    for line in (ROOT / "tools" / "schemagen" / "go.mod").read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["k8s.io/api"] or parts[:2] == ["require", "k8s.io/api"]:
            return parts[-1]
    raise SystemExit("tools/schemagen/go.mod does not require k8s.io/api")


def module_zip(module: str, version: str) -> zipfile.ZipFile:
    """The module's zip from the module proxy (through the local module cache)."""
    # Outside any module, `go mod download` only fetches the module and names its files. It may report that
    # building the module needs a newer Go; the zip is there all the same, and only its YAML is read.
    with tempfile.TemporaryDirectory() as scratch:
        text = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], cwd=scratch,
                              capture_output=True, text=True).stdout
    info = json.loads(text)
    if not info.get("Zip") or not Path(info["Zip"]).is_file():
        raise SystemExit(f"go mod download {module}@{version} failed: {info.get('Error')}")
    return zipfile.ZipFile(info["Zip"])


class CrdReducer:
    """Turns one CRD version's openAPIV3Schema into named types."""

    def __init__(self, types: dict[str, dict[str, str]], required: dict[str, list[str]]) -> None:
        self.types = types
        self.required = required

    def object_type(self, name: str, schema: dict[str, Any], root: bool = False) -> str:
        fields: dict[str, str] = {}
        self.types[name] = fields
        for key, sub in (schema.get("properties") or {}).items():
            if root and key == "metadata":
                fields[key] = "meta/v1.ObjectMeta"  # the API server checks ObjectMeta for custom resources too
            else:
                fields[key] = self.value_type(f"{name}.{key}", sub)
        if schema.get("required"):
            self.required[name] = sorted(schema["required"])
        return name

    def value_type(self, name: str, schema: dict[str, Any]) -> str:
        for suffix, builtin in EMBEDDED.items():
            if name.endswith(suffix):
                return builtin
        if schema.get("x-kubernetes-int-or-string"):
            return "intOrString"
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return "any"
        kind = schema.get("type")
        if kind == "string":
            return "time" if schema.get("format") == "date-time" else "string"
        if kind == "boolean":
            return "bool"
        if kind == "integer":
            return "int32" if schema.get("format") == "int32" else "int64"
        if kind == "number":
            return "float64"
        if kind == "array":
            return "[]" + self.value_type(f"{name}[]", schema.get("items") or {})
        if kind == "object":
            if "properties" in schema or "additionalProperties" not in schema:
                return self.object_type(name, schema)
            return "map[]" + self.value_type(f"{name}{{}}", schema["additionalProperties"])
        return "any"


def crd_schema(types: dict[str, dict[str, str]], kinds: dict[str, str]) -> dict[str, list[str]]:
    required: dict[str, list[str]] = {}
    reducer = CrdReducer(types, required)
    for module, version, directory, files in CRD_SOURCES:
        archive = module_zip(module, version)
        for file in files:
            crd = yaml.safe_load(archive.read(f"{module}@{version}/{directory}/{file}"))
            add_crd(reducer, crd, kinds)
    return required


def add_crd(reducer: CrdReducer, crd: dict[str, Any], kinds: dict[str, str]) -> None:
    """Every served version of one CRD, as a kind."""
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    for version in crd["spec"]["versions"]:
        if not version.get("served"):
            continue
        api_version = f"{group}/{version['name']}"
        root = reducer.object_type(f"{api_version}.{kind}", version["schema"]["openAPIV3Schema"], root=True)
        kinds[f"{api_version}/{kind}"] = root


def main() -> int:
    schema = builtin_schema()
    types: dict[str, dict[str, str]] = schema["types"]
    kinds: dict[str, str] = schema["kinds"]
    for name, fields in KUEUE_CONFIG_ADDITIONS.items():
        types.setdefault(name, {}).update(fields)
    required = crd_schema(types, kinds)
    document = {
        "source": {
            "builtin": f"k8s.io/api {k8s_api_version()} (Go types, by tools/schemagen)",
            "karpenter": f"{KARPENTER_MODULE} {KARPENTER_VERSION} pkg/apis/crds ({', '.join(CRDS)})",
            "nvidia": f"{NVIDIA_MODULE} {NVIDIA_VERSION} {NVIDIA_CRD_DIR} ({', '.join(NVIDIA_CRDS)})",
            "kueue": f"{KUEUE_MODULE} {KUEUE_VERSION} {KUEUE_CRD_DIR} (8 CRDs) and apis/config (Go types)",
            "generator": "tools/gen_schema.py",
        },
        "kinds": dict(sorted(kinds.items())),
        "required": dict(sorted(required.items())),
        "types": dict(sorted(types.items())),
    }
    OUTPUT.write_text(json.dumps(document, indent=0, sort_keys=False, separators=(",", ":")) + "\n")
    print(f"{OUTPUT.relative_to(ROOT)}: {len(kinds)} kinds, {len(types)} types", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
