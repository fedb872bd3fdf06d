"""``dratwin cluster``: cluster-level commands; ``generate`` prints the Nodes and ResourceSlices of real instances."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from dratwin.api.codec import write_list
from dratwin.catalog import load_catalog, ultraservers
from dratwin.cluster.generate import generate_stream
from dratwin.cluster.generate_options import (
    AUTO_MODE,
    DEVICE_PLUGIN,
    DRA,
    KARPENTER,
    MANAGERS,
    NODE_GROUP,
    PROVISIONERS,
    GenerateOptions,
    MigRequest,
    NodeGroup,
    NodeTaint,
    parse_mig_request,
    parse_node_group,
    parse_taint,
)
from dratwin.errors import DratwinError

EXIT_OK, EXIT_ERROR = 0, 2
PROG = "dratwin cluster generate"

GENERATE_EPILOG = f"""\
examples:
  dratwin cluster generate --instance-type p5.48xlarge=4 --instance-type g6e.12xlarge=10
      4 p5 and 10 g6e nodes whose GPUs and EFAs are managed by the DRA drivers, with their ResourceSlices
  dratwin cluster generate -t p4d.24xlarge=2 --mig 1g.5gb
      p4d nodes whose A100s are each split into 7 MIG devices of 1g.5gb (static MIG)
  dratwin cluster generate -t p5.48xlarge --mig 3g.40gb=1 --mig 2g.20gb=1 --mig 1g.10gb
      one 3g.40gb and one 2g.20gb per H100, the rest filled with 1g.10gb
  dratwin cluster generate -t g6e.12xlarge=3 --gpu-manager device-plugin --efa-manager device-plugin
      nodes that advertise nvidia.com/gpu and vpc.amazonaws.com/efa instead (no ResourceSlices)
  dratwin cluster generate -t trn2.48xlarge=2 -t inf2.24xlarge
      Trainium2 and Inferentia2 nodes whose Neuron devices the Neuron DRA driver publishes (neuron.aws.com), with
      the connected groups (resource.aws.com/devicegroup{{1,4,8,16}}_id) shared with their EFAs
  dratwin cluster generate -t trn2.48xlarge --neuron-manager device-plugin
      aws.amazon.com/neuron and aws.amazon.com/neuroncore in allocatable instead
  dratwin cluster generate -t p5.48xlarge=2 --taint nvidia.com/gpu:NoSchedule --zone us-west-2a --zone us-west-2b
  dratwin cluster generate -t p5.48xlarge -o json > cluster.json
  dratwin cluster generate -t p5.48xlarge > cluster.yaml
  dratwin cluster generate -t u-p6e-gb200x72=2 --gpu-manager device-plugin --provisioner node-group --nodepool gb200
      two P6e-GB200 UltraServers (36 nodes, 4 GPUs each) from a managed node group on a Capacity Block, as the
      EKS UltraServer guide sets them up: GPUs from the device plugin, IMEX channels from the DRA driver
  dratwin allocate -f cluster.yaml -f examples/deviceclasses.yaml -f examples/claims.yaml \\
      --node ip-10-0-64-10.ec2.internal --claim ml/train-gpu-efa

what the nodes carry:
  labels         Karpenter's instance labels (eks.amazonaws.com/instance-* with --provisioner {AUTO_MODE}; a
                 managed node group's eks.amazonaws.com/nodegroup and capacityType with {NODE_GROUP}),
                 zone/region, capacity type on-demand, nvidia.com/gpu.present, and
                 eks.amazonaws.com/device-manager-nvidia|efa = the --gpu-manager / --efa-manager value
  UltraServers   -t u-p6e-gb200x72=N (18 instances each) or u-p6e-gb200x36=N (9): every UltraServer is one NVLink
                 domain, its nodes share one nvidia.com/gpu.clique (GPU Feature Discovery's label) and come from a
                 Capacity Block; -t p6e-gb200.36xlarge=N packs N nodes into UltraServers of 18
  allocatable    Karpenter's model: kube-reserved cpu 6%/1%/0.5%/0.25% by core, memory 11Mi x max-pods + 255Mi,
                 eviction 100Mi; max pods = EKS's ENI-limited value (110 for types Karpenter does not list)
  taints         none: Karpenter and EKS do not taint GPU nodes themselves (NodePools do; use --taint)
  slices         gpu.nvidia.com (gpu-<i>, or MIG devices with --mig), neuron.aws.com (neurondevice<i>; one
                 neuron_node device per trn2u UltraServer node) and dra.net (EFAs), in the shape the drivers
                 publish, with the PCIe roots of Karpenter's DRA metadata (trn EFAs: the devicegroup ids instead);
                 on GB200 UltraServer nodes also compute-domain.nvidia.com (channel-0, daemon-0: the IMEX channel
                 and daemon of ComputeDomains)
  Types without that metadata (g7e, g7, p6e-gb200, ...) get devices without pcieRoot, with a warning.
  Names, UUIDs and PCI addresses are deterministic placeholders: the same arguments give the same output.

exit status: 0 printed; 2 bad arguments (unknown instance type, bad TYPE=N, unknown MIG profile, ...).
"""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "cluster",
        help="cluster objects: generate the Nodes and ResourceSlices of real EC2 instances",
        description="Commands about whole clusters.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subcommands = parser.add_subparsers(dest="cluster_command", metavar="SUBCOMMAND")
    generate_parser = subcommands.add_parser(
        "generate",
        help="print the Nodes and ResourceSlices of given EC2 instance types",
        description="Print the Nodes and the ResourceSlices that the NVIDIA GPU DRA driver, the AWS Neuron DRA driver\n"
        "and DRANET publish on the given EC2 instances, as `kubectl get nodes,resourceslices -o yaml` shows them\n"
        "on EKS (Kubernetes 1.36, nodes launched by Karpenter, EKS Auto Mode or a managed node group).",
        epilog=GENERATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    generate_parser.add_argument(
        "-t", "--instance-type", dest="groups", action="append", required=True, metavar="TYPE=N",
        type=_checked(_node_group),
        help="N nodes of the EC2 instance type TYPE (N defaults to 1), or N UltraServers (u-p6e-gb200x72); repeatable",
    )
    generate_parser.add_argument(
        "--gpu-manager", choices=MANAGERS, default=DRA,
        help=f"who manages NVIDIA GPUs: the DRA driver (ResourceSlices) or the device plugin (nvidia.com/gpu); "
        f"default {DRA}",
    )
    generate_parser.add_argument(
        "--efa-manager", choices=MANAGERS, default=DRA,
        help=f"who manages EFAs: DRANET (ResourceSlices) or the EFA device plugin (vpc.amazonaws.com/efa); "
        f"default {DRA}",
    )
    generate_parser.add_argument(
        "--neuron-manager", choices=MANAGERS, default=None,
        help=f"who manages Neuron devices (Trainium, Inferentia2): the Neuron DRA driver (ResourceSlices) or the "
        f"Neuron device plugin (aws.amazon.com/neuron, aws.amazon.com/neuroncore); default {DRA}, and "
        f"{DEVICE_PLUGIN} with --provisioner {AUTO_MODE} (Auto Mode runs no Neuron DRA driver)",
    )
    generate_parser.add_argument(
        "--mig", action="append", default=[], metavar="PROFILE[=N]", type=_checked(parse_mig_request),
        help="partition every MIG-capable GPU (A100, H100, H200, B200): N instances of PROFILE per GPU, or as many "
        "as fit without =N; repeatable for mixed layouts",
    )
    generate_parser.add_argument(
        "--zone", dest="zones", action="append", default=[], metavar="ZONE",
        help="availability zone (default us-east-1a); repeat to spread the nodes round-robin",
    )
    generate_parser.add_argument(
        "--name-prefix", metavar="PREFIX",
        help="name the nodes PREFIX-1, PREFIX-2, ... instead of ip-10-0-*.ec2.internal",
    )
    generate_parser.add_argument(
        "--provisioner", choices=PROVISIONERS, default=KARPENTER,
        help=f"who launched the nodes (labels and default root volume differ); default {KARPENTER}",
    )
    generate_parser.add_argument("--nodepool", default="default", metavar="NAME",
                                 help=f"karpenter.sh/nodepool label (the node group's name with {NODE_GROUP})")
    generate_parser.add_argument(
        "--taint", dest="taints", action="append", default=[], metavar="KEY[=VALUE]:EFFECT",
        type=_checked(parse_taint), help="taint every node, e.g. nvidia.com/gpu:NoSchedule; repeatable",
    )
    generate_parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="output format")
    generate_parser.set_defaults(handler=run_generate)
    parser.set_defaults(handler=_usage(parser))


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_ERROR

    return handler


def _checked(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type=``: a GenerateError (or unknown instance type) becomes a usage error (exit status 2)."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except DratwinError as error:
            raise argparse.ArgumentTypeError(str(error)) from error

    convert.__name__ = parse.__name__
    return convert


def _node_group(text: str) -> NodeGroup:
    group = parse_node_group(text)
    if group.instance_type.lower() in ultraservers():
        return NodeGroup(group.instance_type.lower(), group.count)
    return NodeGroup(load_catalog().get(group.instance_type).name, group.count)


def options_from(args: argparse.Namespace) -> GenerateOptions:
    groups: list[NodeGroup] = args.groups
    mig: list[MigRequest] = args.mig
    taints: list[NodeTaint] = args.taints
    return GenerateOptions(
        groups=tuple(groups),
        gpu_manager=args.gpu_manager,
        efa_manager=args.efa_manager,
        neuron_manager=args.neuron_manager,
        mig=tuple(mig),
        zones=tuple(args.zones) or ("us-east-1a",),
        name_prefix=args.name_prefix,
        provisioner=args.provisioner,
        nodepool=args.nodepool,
        taints=tuple(taints),
    )


def run_generate(args: argparse.Namespace) -> int:
    try:
        stream = generate_stream(options_from(args))
    except DratwinError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    for warning in stream.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    write_list(stream.objects(), sys.stdout, args.output)  # object by object: 10,000 nodes in bounded memory
    return EXIT_OK


__all__ = ["DEVICE_PLUGIN", "DRA", "options_from", "register", "run_generate"]
