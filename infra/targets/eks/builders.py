"""Pure data for the EKS target: GPU offers, IAM policy documents, node groups, kubeconfig."""

from __future__ import annotations

import json
import re
from typing import Any

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.aws.identity import IRSA_ANNOTATION, document
from infra.facts import hardware as facts
from infra.facts import kubernetes as kf
from infra.facts.drivers import NodeDriver
from infra.k8s.spec import (
    GPU_POOL,
    GPU_TAINT_KEY,
    GPU_TAINT_VALUE,
    MODEL_SYNC_PATH,
    POOL_LABEL,
    ModelSync,
    PrometheusSource,
    WorkloadIdentity,
)
from packager.tensorrt.engines import ENGINES_PREFIX

#: GPU instance families the kit deploys on (NVIDIA-accelerated AL2023 AMI); their GPUs,
#: counts and memory come from the one hardware table (infra/facts/hardware.py).
EKS_GPU_FAMILIES: tuple[str, ...] = (
    "g4dn", "g5", "g6", "g6e", "g7e", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300",
)  # fmt: skip


def _offer(family: str) -> str:
    row = aws_catalog.EC2_GPU_FAMILIES[family]
    most = max(row.gpus.values())
    gpu = facts.GPUS[row.gpu]
    return f"up to {most}x NVIDIA {row.gpu} {gpu.memory_gib} GB"


GPU_FAMILIES: dict[str, str] = {family: _offer(family) for family in EKS_GPU_FAMILIES}

#: Families EC2 offers that the kit refuses, with the reason shown to the user.
REFUSED_FAMILIES: dict[str, str] = {
    "inf1": "AWS Inferentia: no CUDA, Triton's GPU backends cannot run (this is what we leave)",
    "inf2": "AWS Inferentia2: no CUDA, Triton's GPU backends cannot run",
    "trn1": "AWS Trainium: no CUDA",
    "g5g": "Graviton (arm64) with T4G: no NVIDIA-accelerated x86_64 AMI, arm64 Triton image",
    "p3": "V100: TensorRT 10 in current Triton images targets Turing (T4) and newer",
    **aws_catalog.UNSUPPORTED_GPU_FAMILIES,
}

#: Cluster Autoscaler's GPU node label (its AWS provider's ``GPULabel``): with it, CA treats a
#: new node as a GPU node still bringing its GPU online instead of adding another one.
ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
ACCELERATOR_OF_FAMILY: dict[str, str] = {
    "g4dn": "nvidia-tesla-t4",
    "g5": "nvidia-a10g",
    "g6": "nvidia-l4",
    "g6e": "nvidia-l40s",
    "g7e": "nvidia-rtx-pro-6000",
    "p4d": "nvidia-tesla-a100",
    "p4de": "nvidia-a100-80gb",
    "p5": "nvidia-h100",
    "p5e": "nvidia-h200",
    "p5en": "nvidia-h200",
    "p6-b200": "nvidia-b200",
    "p6-b300": "nvidia-b300",
}

GPU_AMI_TYPE = "AL2023_x86_64_NVIDIA"  # drivers + container toolkit preinstalled
#: the NVIDIA driver of that AMI: kmod-nvidia-latest-dkms 580.159.03 in AMI release v20260714,
#: the newest in awslabs/amazon-eks-ami CHANGELOG.md at 81fec2e (read 2026-12-07); the node
#: group takes the newest AMI release when it is created, which may carry a newer driver
EKS_NVIDIA_AMI_DRIVER = NodeDriver(
    "580.159.03",
    "https://github.com/awslabs/amazon-eks-ami/blob/81fec2e895854f599974fe4d3d72f61c0a9aaffa/"
    "CHANGELOG.md (AMI release v20260714, AL2023 NVIDIA)",
)
SYSTEM_AMI_TYPE = "AL2023_x86_64_STANDARD"
#: node group capacity types the kit sets (eksSpot); tdk doctor checks both tuples against
#: the installed botocore's EKS AMITypes / CapacityTypes enums (infra/targets/eks/schema.py)
CAPACITY_TYPES = ("ON_DEMAND", "SPOT")
_INSTANCE = re.compile(r"^([a-z0-9-]+)\.([a-z0-9]+)$")

AUTOSCALER_SA = "cluster-autoscaler"
#: chart versions per Kubernetes minor: infra/facts/kubernetes.py (device plugin, autoscaler)
#: the system group starts with this many nodes (KEDA, CoreDNS, the autoscaler), within max
SYSTEM_DESIRED_NODES = 2


def split_instance(instance_type: str) -> tuple[str, str] | None:
    """``g5.xlarge`` -> ("g5", "xlarge"); None when it is not an EC2 instance type."""
    match = _INSTANCE.match(instance_type)
    return (match.group(1), match.group(2)) if match else None


def gpus_of(instance_type: str) -> int:
    """GPUs in an instance (the hardware table's count; 0 for a size it does not list)."""
    family, size = split_instance(instance_type) or ("", "")
    row = aws_catalog.EC2_GPU_FAMILIES.get(family)
    return row.gpus.get(size, 0) if row is not None else 0


def release_read_policy(bucket: str, prefix: str) -> str:
    """GetObject under the release prefix (its engine cache included); ListBucket only for
    keys under it. No write anywhere: the engine cache is written by the engine builder's role
    alone (``engine_build_policy``), so a serving pod cannot plant an engine."""
    scope = f"{prefix}/" if prefix else ""
    return document(
        {
            "Sid": "ReadRelease",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{bucket}/{scope}*",
        },
        {
            "Sid": "ListRelease",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:aws:s3:::{bucket}",
            "Condition": {"StringLike": {"s3:prefix": [f"{scope}*", prefix] if prefix else ["*"]}},
        },
    )


def engine_build_policy(bucket: str, prefix: str) -> str:
    """``tdk build``'s Job, and only it, works in the release's engine cache: ``aws s3 sync``
    lists and reads an entry's ``input/``, ``aws s3 cp`` writes the engine and its record
    (PutObject on ``<prefix>/engines/*``); nothing else of the release or the bucket. Object
    ARNs ``arn:aws:s3:::bucket/key`` with ``*`` and ListBucket's ``s3:prefix`` condition key
    (docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html, read
    2026-12-07)."""
    cache = f"{prefix}/{ENGINES_PREFIX}" if prefix else ENGINES_PREFIX
    return document(
        {
            "Sid": "ReadEngineCache",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{bucket}/{cache}*",
        },
        {
            "Sid": "ListEngineCache",
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": f"arn:aws:s3:::{bucket}",
            "Condition": {"StringLike": {"s3:prefix": [f"{cache}*"]}},
        },
        {
            "Sid": "WriteEngineCache",
            "Effect": "Allow",
            "Action": "s3:PutObject",
            "Resource": f"arn:aws:s3:::{bucket}/{cache}*",
        },
    )


def amp_query_policy(workspace_arn: str) -> str:
    """KEDA's operator may query one AMP workspace, nothing else."""
    return document(
        {
            "Sid": "QueryTritonMetrics",
            "Effect": "Allow",
            "Action": [
                "aps:QueryMetrics",
                "aps:GetSeries",
                "aps:GetLabels",
                "aps:GetMetricMetadata",
            ],
            "Resource": workspace_arn,
        }
    )


def autoscaler_policy(cluster_name: str) -> str:
    """Cluster Autoscaler may resize only this cluster's Auto Scaling groups."""
    return document(
        {
            "Sid": "Describe",
            "Effect": "Allow",
            "Action": [
                "autoscaling:DescribeAutoScalingGroups",
                "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeLaunchConfigurations",
                "autoscaling:DescribeScalingActivities",
                "autoscaling:DescribeTags",
                "ec2:DescribeImages",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplateVersions",
                "ec2:GetInstanceTypesFromInstanceRequirements",
                "eks:DescribeNodegroup",
            ],
            "Resource": "*",
        },
        {
            "Sid": "ResizeOwnGroups",
            "Effect": "Allow",
            "Action": [
                "autoscaling:SetDesiredCapacity",
                "autoscaling:TerminateInstanceInAutoScalingGroup",
            ],
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"
                }
            },
        },
    )


def gpu_node_group_args(
    instance_type: str, min_nodes: int, max_nodes: int, spot: bool
) -> dict[str, Any]:
    """``aws.eks.NodeGroup`` arguments of the GPU group: NVIDIA AMI, bounds, taint, labels."""
    return {
        "ami_type": GPU_AMI_TYPE,
        "instance_types": [instance_type],
        "capacity_type": CAPACITY_TYPES[1] if spot else CAPACITY_TYPES[0],
        "disk_size": 200,
        "scaling_config": {
            "min_size": min_nodes,
            "max_size": max_nodes,
            "desired_size": min_nodes,
        },
        "update_config": {"max_unavailable": 1},
        "labels": {
            POOL_LABEL: GPU_POOL,
            "nvidia.com/gpu.present": "true",
            ACCELERATOR_LABEL: ACCELERATOR_OF_FAMILY[(split_instance(instance_type) or ("",))[0]],
        },
        "taints": [{"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}],
    }


def system_node_group_args(instance_type: str, max_nodes: int) -> dict[str, Any]:
    """The untainted CPU group for KEDA, the autoscaler and CPU workloads that spill over."""
    return {
        "ami_type": SYSTEM_AMI_TYPE,
        "instance_types": [instance_type],
        "capacity_type": "ON_DEMAND",
        # CreateNodegroup requires min <= desired <= max
        "scaling_config": {
            "min_size": 1,
            "max_size": max_nodes,
            "desired_size": min(SYSTEM_DESIRED_NODES, max_nodes),
        },
        "update_config": {"max_unavailable": 1},
    }


def device_plugin_values() -> dict[str, Any]:
    """The NVIDIA device plugin runs only on the GPU nodes and tolerates their taint."""
    return {
        "nodeSelector": {POOL_LABEL: GPU_POOL},
        "tolerations": [{"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}],
    }


def autoscaler_values(
    cluster_name: str, region: str, role_arn: Any, kubernetes_version: str
) -> dict[str, Any]:
    """Cluster Autoscaler discovers the node groups by tag, runs as its IRSA role, and runs
    the release whose minor matches the cluster's Kubernetes version."""
    return {
        "image": {"tag": kf.autoscaler_for(kubernetes_version).image_tag},
        "autoDiscovery": {"clusterName": cluster_name},
        "awsRegion": region,
        "rbac": {
            "serviceAccount": {
                "name": AUTOSCALER_SA,
                "annotations": {IRSA_ANNOTATION: role_arn},
            }
        },
        "extraArgs": {"balance-similar-node-groups": True, "skip-nodes-with-system-pods": False},
    }


def triton_role_name(name: str) -> str:
    """IAM role name of the Triton pods (fixed, so ``tdk render`` can name its ARN)."""
    return f"{name}-triton-release-reader"


def build_role_name(name: str) -> str:
    """IAM role name of ``tdk build``'s Job, the engine cache's only writer (shorter than
    ``triton_role_name``, so the same ``name`` limit holds). The physical name keeps the word
    plan of before 2026-12-07 (issue 50 item 3): a new role name would replace the live role."""
    return f"{name}-plan-builder"


def role_arn(account_id: str, role_name: str) -> str:
    return f"arn:aws:iam::{account_id}:role/{role_name}"


def amp_query_url(region: str, workspace_id: str) -> str:
    """AMP's Prometheus-compatible query endpoint (KEDA appends /api/v1/query)."""
    return f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace_id}"


def control_plane_log_group(cluster_name: str) -> str:
    """Where EKS sends the control-plane logs of ``cluster_name``."""
    return f"/aws/eks/{cluster_name}/cluster"


#: the log groups the CloudWatch observability add-on (Container Insights) writes to
CONTAINER_INSIGHTS_LOGS = ("performance", "application", "dataplane", "host")


def container_insights_log_groups(cluster_name: str) -> list[str]:
    return [f"/aws/containerinsights/{cluster_name}/{kind}" for kind in CONTAINER_INSIGHTS_LOGS]


def kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that gets short-lived tokens from ``aws eks get-token`` (no keys stored)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster_name,
                    "cluster": {"server": endpoint, "certificate-authority-data": ca_data},
                }
            ],
            "contexts": [
                {"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}
            ],
            "current-context": cluster_name,
            "users": [
                {
                    "name": cluster_name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                cluster_name,
                                "--region",
                                region,
                                "--output",
                                "json",
                            ],
                        }
                    },
                }
            ],
        }
    )


#: Service annotations per ``k8sServiceExposure`` (an NLB, internal or internet-facing)
LOAD_BALANCER_ANNOTATIONS: dict[str, dict[str, str]] = {
    "internal-lb": {
        "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    },
    "external-lb": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
}


# --- the Kubernetes layer's hooks (infra/k8s): pod identity, metrics query auth, model sync
def workload_identity(role_arn: Any) -> WorkloadIdentity:
    """Triton's pods run as an IAM role through IRSA: the ServiceAccount names the role."""
    return WorkloadIdentity(service_account={IRSA_ANNOTATION: role_arn})


def keda_pod_identity(role_arn: Any) -> dict[str, Any]:
    """KEDA's operator runs as an IAM role through IRSA (the chart's ``podIdentity.aws``)."""
    return {"aws": {"irsa": {"enabled": True, "roleArn": role_arn}}}


def amp_source(query_url: str, region: str) -> PrometheusSource:
    """KEDA queries Amazon Managed Service for Prometheus as its IRSA role, signing (SigV4)
    for the workspace's region."""
    return PrometheusSource(query_url, "aws", {"awsRegion": region})


def model_sync(image: str, repository: str) -> ModelSync:
    """``aws s3 sync`` of ``s3://bucket/prefix/repository`` into the pod, as the pod's IRSA role
    (the AWS CLI reads the projected web-identity token).

    Triton 24.09's S3 client calls HeadBucket before listing, which a role scoped to the
    release prefix may not do, and Triton does not document IRSA; the AWS CLI does.
    """
    command = ("aws", "s3", "sync", repository, MODEL_SYNC_PATH, "--only-show-errors")
    return ModelSync(image, command)
