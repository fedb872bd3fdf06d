"""What the AWS Neuron DRA driver and DRANET publish on a Trainium / Inferentia node, for ``cluster generate``.

The Neuron DRA driver (``neuron.aws.com``, Neuron docs "Neuron DRA Driver Attributes Reference") publishes one
pool per node with a device ``neurondevice<N>`` per Neuron device and these attributes:

- on every device: ``deviceId``, ``instanceType``, ``neuronDriverVersion``, ``draDriverVersion``, ``resourceType``
  (``neuron_device``), ``networkNodeLayer1/2/3`` (the node's EC2 instance topology);
- trn types with more than one device that are not UltraServer nodes: ``topology_x`` (row), ``topology_y``
  (column), ``topology4_id`` (row) and, from 8 devices, ``topology8_id`` (pair of rows);
- EFA-enabled types: ``resource.aws.com/devicegroup1_id`` (the paired EFA's PCI address) and
  ``devicegroup4/8/16_id``, which DRANET publishes on the paired EFAs too (values: :mod:`dratwin.catalog.neuron`).

An UltraServer node (trn2u.48xlarge) is published as one device of ``resourceType: neuron_node`` (the docs' claims
take "one node from the UltraServer" with ``count: 1``) with ``capacityBlockId``; the device's name and that it
is the node's only device are INFERRED (the driver's source is not public). Its node carries the UltraServer
labels of the Neuron docs (``neuron.amazonaws.com/ultraserver-mode``, ``-server-id-2/4``, ``-node-id-2/4``): four
consecutive nodes of a group form one UltraServer, in one zone.

PLACEHOLDERS (format only): the driver versions (the Neuron docs' example claims name neuronDriverVersion
2.25.4.0; the DRA driver 1.0.1), the network node ids, capacity block ids and UltraServer ids.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dratwin.catalog.neuron import NeuronShape

NEURON_DRIVER = "neuron.aws.com"
NEURON_DRIVER_VERSION = "2.25.4.0"
DRA_DRIVER_VERSION = "1.0.1"
NEURON_DEVICE, NEURON_NODE = "neuron_device", "neuron_node"
ULTRASERVER_LABELS = "neuron.amazonaws.com/"
ULTRASERVER_MODES = "1_2_4"  # the mode label of a trn2u node in the Neuron docs (sets of 1, 2 or 4 nodes)
_ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_BDF = re.compile(r"^(?P<domain>[0-9a-f]{4}):(?P<bus>[0-9a-f]{2}):(?P<slot>[0-9a-f]{2})\.(?P<function>[0-7])$")


@dataclass(frozen=True)
class Placement:
    """Where a node sits: its zone, the group of nodes it was made with and its position in that group."""

    zone: str
    group: int
    position: int

    def rack(self, shape: NeuronShape | None) -> str:
        """The nodes that share the closest network node: an UltraServer, else four consecutive nodes."""
        size = shape.ultraserver if shape is not None and shape.ultraserver else 4
        return f"{self.zone}/{self.group}/{self.position // size}"


def _hex_id(prefix: str, key: str, digits: int = 17) -> str:
    return prefix + hashlib.sha256(key.encode()).hexdigest()[:digits]


def _label_id(key: str) -> str:
    digest = hashlib.sha256(key.encode()).digest()
    return "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest[:16])


def network_layers(place: Placement, shape: NeuronShape | None) -> dict[str, dict[str, Any]]:
    """``networkNodeLayer1/2/3``: one spine per zone, one per 16 nodes of a group, the node's rack (placeholders)."""
    return {
        "networkNodeLayer1": {"string": _hex_id("nn-", f"layer1/{place.zone}")},
        "networkNodeLayer2": {"string": _hex_id("nn-", f"layer2/{place.zone}/{place.group}/{place.position // 16}")},
        "networkNodeLayer3": {"string": _hex_id("nn-", f"layer3/{place.rack(shape)}")},
    }


def neuron_devices(shape: NeuronShape, instance_type: str, place: Placement) -> list[dict[str, Any]]:
    """The devices of the node's ``neuron.aws.com`` pool."""
    common: dict[str, dict[str, Any]] = {
        "draDriverVersion": {"version": DRA_DRIVER_VERSION},
        "instanceType": {"string": instance_type},
        "neuronDriverVersion": {"string": NEURON_DRIVER_VERSION},
        **network_layers(place, shape),
    }
    if shape.ultraserver:
        attributes = {
            **common,
            "capacityBlockId": {"string": _hex_id("cr-", f"capacity-block/{place.rack(shape)}")},
            "deviceId": {"int": 0},
            "resourceType": {"string": NEURON_NODE},
        }
        return [{"name": "neuronnode0", "attributes": dict(sorted(attributes.items()))}]
    devices = []
    for device_id in range(shape.count):
        attributes = {**common, "deviceId": {"int": device_id}, "resourceType": {"string": NEURON_DEVICE}}
        attributes.update({k: {"int": v} for k, v in shape.topology(device_id).items()})
        attributes.update({k: {"string": v} for k, v in shape.device_groups(device_id).items()})
        devices.append({"name": f"neurondevice{device_id}", "attributes": dict(sorted(attributes.items()))})
    return devices


def ultraserver_labels(shape: NeuronShape | None, place: Placement) -> dict[str, str]:
    """The UltraServer labels of a trn2u node: its UltraServer (sets of 4) and half of it (sets of 2)."""
    if shape is None or not shape.ultraserver:
        return {}
    size = shape.ultraserver
    server = place.position // size
    return {
        f"{ULTRASERVER_LABELS}ultraserver-mode": ULTRASERVER_MODES,
        f"{ULTRASERVER_LABELS}ultraserver-node-id-2": str(place.position % 2),
        f"{ULTRASERVER_LABELS}ultraserver-node-id-4": str(place.position % size),
        f"{ULTRASERVER_LABELS}ultraserver-server-id-2": _label_id(f"{place.rack(shape)}/{place.position // 2}"),
        f"{ULTRASERVER_LABELS}ultraserver-server-id-4": _label_id(f"{place.zone}/{place.group}/{server}"),
    }


def rdma_device(address: str) -> str | None:
    """The RDMA device name rdma-core's udev rules give the adapter at ``address``: ``rdmap<bus>s<slot>``
    (decimal, ``f<function>`` when not 0, ``P<domain>`` first when not 0), as in DRANET's live p4d slices
    (``0000:10:1b.0`` -> ``rdmap16s27``); None for an address that is not a PCI BDF."""
    match = _BDF.match(address)
    if match is None:
        return None
    domain, bus, slot, function = (int(match[k], 16) for k in ("domain", "bus", "slot", "function"))
    name = f"rdmaP{domain}p{bus}s{slot}" if domain else f"rdmap{bus}s{slot}"
    return name + (f"f{function}" if function else "")


def neuron_efa_attributes(shape: NeuronShape, address: str) -> Mapping[str, dict[str, Any]]:
    """What DRANET's AWS provider adds to an EFA of a Neuron type: the devicegroup ids of its Neuron device."""
    return {name: {"string": value} for name, value in shape.efa_groups(address).items()}
