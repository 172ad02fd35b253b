"""Pure data of EKS monitoring: the AMP scraper's config and RBAC, AMP rule groups and
Alertmanager routing, the CloudWatch dashboard and alarms (no Pulumi, no cloud SDK).

``tdk render k8s`` uses ``scraper_rbac()`` from here, so rendering never imports Pulumi.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from infra.k8s import promql

SCRAPER_USER = "aps-collector-user"
CW_NAMESPACE = "amazon-cloudwatch"
CW_AGENT_SA = "cloudwatch-agent"


def scrape_configuration(scrape_seconds: int = 30) -> str:
    """Prometheus scrape config: Triton pods' ``metrics`` port (and the ``front`` port of an
    ``mme`` pod: its ``tdk_*`` series), labelled namespace/pod/job."""
    meta = "__meta_kubernetes_pod_"
    config = {
        "global": {"scrape_interval": f"{scrape_seconds}s"},
        "scrape_configs": [
            {
                "job_name": "triton",
                "kubernetes_sd_configs": [{"role": "pod"}],
                "relabel_configs": [
                    {
                        "source_labels": [f"{meta}label_app_kubernetes_io_name"],
                        "action": "keep",
                        "regex": "triton",
                    },
                    {
                        "source_labels": [f"{meta}container_port_name"],
                        "action": "keep",
                        "regex": "metrics|front",
                    },
                    {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                    {"source_labels": [f"{meta}name"], "target_label": "pod"},
                    {
                        "source_labels": [f"{meta}label_app_kubernetes_io_instance"],
                        "target_label": "job",
                    },
                ],
            }
        ],
    }
    return yaml.safe_dump(config, sort_keys=False)


def scraper_rbac() -> list[dict[str, Any]]:
    """What the AMP managed scraper may read in the cluster (discovery and /metrics only)."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "aps-collector-role"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": [
                        "nodes",
                        "nodes/proxy",
                        "nodes/metrics",
                        "services",
                        "endpoints",
                        "pods",
                    ],
                    "verbs": ["get", "list", "watch"],
                },
                {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "aps-collector-user-role-binding"},
            "subjects": [
                {"kind": "User", "name": SCRAPER_USER, "apiGroup": "rbac.authorization.k8s.io"}
            ],
            "roleRef": {
                "kind": "ClusterRole",
                "name": "aps-collector-role",
                "apiGroup": "rbac.authorization.k8s.io",
            },
        },
    ]


def alertmanager_yaml(topic_arn: str, region: str) -> str:
    """Route every AMP alert to the stack's SNS topic (signed with SigV4)."""
    config = {
        "route": {"receiver": "sns"},
        "receivers": [
            {"name": "sns", "sns_configs": [{"topic_arn": topic_arn, "sigv4": {"region": region}}]}
        ],
    }
    return yaml.safe_dump({"alertmanager_config": yaml.safe_dump(config, sort_keys=False)})


def _metric(name: str, cluster: str, **dims: str) -> list[Any]:
    row: list[Any] = ["ContainerInsights", name, "ClusterName", cluster]
    for key, value in dims.items():
        row += [key, value]
    return row


def dashboard_json(
    cluster: str, namespace: str, region: str, workspace_id: str, multi_model: bool = False
) -> str:
    """CloudWatch dashboard: GPU utilisation and memory, running Triton pods, nodes, CPU; plus
    the PromQL of the Triton figures KEDA and the AMP alert rules evaluate (and of an ``mme``
    workload's multi-model figures)."""
    charts = [
        ("GPU utilization (%)", _metric("node_gpu_utilization", cluster)),
        ("GPU memory utilization (%)", _metric("node_gpu_memory_utilization", cluster)),
        (
            "Triton pods running (replicas)",
            _metric("namespace_number_of_running_pods", cluster, Namespace=namespace),
        ),
        ("Nodes", _metric("cluster_node_count", cluster)),
        ("Pod CPU utilization (%)", _metric("pod_cpu_utilization", cluster, Namespace=namespace)),
        ("Failed nodes", _metric("cluster_failed_node_count", cluster)),
    ]
    widgets: list[dict[str, Any]] = [
        {
            "type": "metric",
            "x": (index % 2) * 12,
            "y": (index // 2) * 6,
            "width": 12,
            "height": 6,
            "properties": {
                "title": title,
                "region": region,
                "metrics": [metric],
                "stat": "Average",
                "period": 60,
                "view": "timeSeries",
            },
        }
        for index, (title, metric) in enumerate(charts)
    ]
    charted = promql.dashboard_figures(namespace, "<workload>", multi_model)
    lines = [f"**{t}**: `{q}`" for t, q in charted.items()]
    widgets.append(
        {
            "type": "text",
            "x": 0,
            "y": 18,
            "width": 24,
            "height": max(6, len(lines)),
            "properties": {
                "markdown": f"### Triton figures (AMP workspace {workspace_id})\n\n"
                + "\n\n".join(lines)
            },
        }
    )
    return json.dumps({"widgets": widgets})


def alarm_args(cluster: str, namespace: str, min_replicas: int) -> list[dict[str, Any]]:
    """CloudWatch alarms on the cluster: Triton below its minimum, GPUs saturated, node failure."""
    base = {"namespace": "ContainerInsights", "statistic": "Average", "period": 60}
    return [
        {
            **base,
            "name": "triton-pods-below-minimum",
            "metric_name": "namespace_number_of_running_pods",
            "dimensions": {"ClusterName": cluster, "Namespace": namespace},
            "comparison_operator": "LessThanThreshold",
            "threshold": min_replicas,
            "evaluation_periods": 10,
            "treat_missing_data": "breaching",
        },
        {
            **base,
            "name": "gpu-saturated",
            "metric_name": "node_gpu_utilization",
            "dimensions": {"ClusterName": cluster},
            "comparison_operator": "GreaterThanThreshold",
            "threshold": 90,
            "evaluation_periods": 15,
            "treat_missing_data": "notBreaching",
        },
        {
            **base,
            "name": "failed-nodes",
            "metric_name": "cluster_failed_node_count",
            "dimensions": {"ClusterName": cluster},
            "comparison_operator": "GreaterThanThreshold",
            "threshold": 0,
            "evaluation_periods": 5,
            "treat_missing_data": "notBreaching",
        },
    ]
