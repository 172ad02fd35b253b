"""``tdk doctor`` for EKS: the kit's facts against the installed Pulumi providers' schemas.

pulumi_aws's ``ec2.InstanceType`` enum (the EC2 instance types the provider knows) against the
GPU sizes the kit offers on EKS and the families it refuses; pulumi_aws_native's
``eks.ClusterUpgradePolicySupportType`` against the ``eksSupportType`` values the kit accepts;
botocore's EKS ``AMITypes`` and ``CapacityTypes`` against what the node groups set.
Read from the installed packages, never from the network.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Iterable
from typing import Any

from infra.clouds.aws import catalog as aws_catalog
from infra.targets.base import SchemaDrift
from infra.targets.eks import builders as b
from infra.targets.eks.config import SUPPORT_TYPES

INSTANCE_TYPES = ("pulumi_aws", "pulumi_aws.ec2._enums", "InstanceType")
SUPPORT_TYPE_ENUM = ("pulumi_aws_native", "pulumi_aws_native.eks._enums",
                     "ClusterUpgradePolicySupportType")  # fmt: skip


def enum_values(package: str, module: str, name: str) -> tuple[str, list[str]]:
    """(``package version``, the values of enum ``module.name``) as installed."""
    enum = getattr(importlib.import_module(module), name)
    source = f"{package} {importlib.metadata.version(package)} {name}"
    return source, [str(member.value) for member in enum]


def _gpu_families(types: Iterable[str]) -> set[str]:
    return {t.split(".")[0] for t in types if t[:1] in ("g", "p") and "." in t}


def instance_drift(source: str, types: list[str]) -> SchemaDrift:
    """GPU sizes the kit offers that the provider does not list, and GPU families it lists
    that the kit neither offers nor refuses (with a reason)."""
    listed = set(types)
    offered = [f"{family}.{size}" for family in b.EKS_GPU_FAMILIES
               for size in aws_catalog.EC2_GPU_FAMILIES[family].gpus]  # fmt: skip
    known = set(b.EKS_GPU_FAMILIES) | set(b.REFUSED_FAMILIES)
    return SchemaDrift(
        source,
        tuple(f"{t}: offered by tdk, not in {source}" for t in offered if t not in listed),
        tuple(f"family {family} in {source}: neither offered nor refused by tdk (add it to "
              "infra/facts/hardware.py)" for family in sorted(_gpu_families(listed) - known)),
    )  # fmt: skip


def support_drift(source: str, values: list[str]) -> SchemaDrift:
    """``eksSupportType`` values the kit accepts against the provider's enum."""
    return SchemaDrift(
        source,
        tuple(f"eksSupportType {v}: accepted by tdk, not in {source}"
              for v in SUPPORT_TYPES if v not in values),
        tuple(f"eksSupportType {v} in {source}: not accepted by tdk"
              for v in values if v not in SUPPORT_TYPES),
    )  # fmt: skip


def botocore_enums() -> tuple[str, dict[str, list[str]]]:
    """(``botocore <version> eks``, its AMITypes and CapacityTypes enums) as installed."""
    import botocore
    import botocore.session

    session: Any = botocore.session.get_session()  # botocore's stubs lack StringShape.enum
    model = session.get_service_model("eks")
    shapes = ("AMITypes", "CapacityTypes")
    return f"botocore {botocore.__version__} eks", {
        shape: list(model.shape_for(shape).enum) for shape in shapes
    }


def node_group_drift(source: str, enums: dict[str, list[str]]) -> SchemaDrift:
    """The AMI types and capacity types the kit's node groups set, against EKS's enums: one
    EKS does not take fails the node group's creation."""
    used = {"AMITypes": (b.GPU_AMI_TYPE, b.SYSTEM_AMI_TYPE), "CapacityTypes": b.CAPACITY_TYPES}
    return SchemaDrift(
        f"{source} AMITypes/CapacityTypes",
        tuple(f"{shape} {value}: set by tdk's node groups, not in {source}"
              for shape, values in used.items() for value in values
              if value not in enums.get(shape, [])),
    )  # fmt: skip


def drift() -> list[SchemaDrift]:
    """Every comparison, from the installed packages (ImportError when one is missing)."""
    return [
        instance_drift(*enum_values(*INSTANCE_TYPES)),
        support_drift(*enum_values(*SUPPORT_TYPE_ENUM)),
        node_group_drift(*botocore_enums()),
    ]
