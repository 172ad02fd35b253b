"""EKS monitoring: Amazon Managed Prometheus for Triton's metrics (KEDA and alert rules read
it), Container Insights for the cluster (CloudWatch dashboard and alarms).

Why AMP rather than the CloudWatch agent for Triton's metrics: KEDA's Prometheus scaler
queries AMP with SigV4 through IRSA, so the ScaledObject runs the very PromQL it runs on GKE;
the managed scraper is agentless (nothing to operate in the cluster); and the alert rules are
the same PromQL as GKE's alert policies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import yaml

from infra.k8s import promql
from infra.k8s.alerts import AlertRule, alert_rules
from infra.k8s.config import AlertThresholds

SCRAPER_USER = "aps-collector-user"
CW_NAMESPACE = "amazon-cloudwatch"
CW_AGENT_SA = "cloudwatch-agent"


def scrape_configuration(scrape_seconds: int = 30) -> str:
    """Prometheus scrape config: Triton pods' ``metrics`` port, labelled namespace/pod/job."""
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
                        "regex": "metrics",
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


def rule_groups_yaml(rules: list[AlertRule]) -> str:
    """AMP rule-group namespace data: the shared alert rules as Prometheus alerting rules."""
    return yaml.safe_dump(
        {
            "groups": [
                {
                    "name": "triton",
                    "rules": [
                        {
                            "alert": rule.name,
                            "expr": rule.query,
                            "for": f"{rule.for_seconds}s",
                            "annotations": {"summary": rule.documentation},
                        }
                        for rule in rules
                    ],
                }
            ]
        },
        sort_keys=False,
    )


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


def dashboard_json(cluster: str, namespace: str, region: str, workspace_id: str) -> str:
    """CloudWatch dashboard: GPU utilisation and memory, running Triton pods, nodes, CPU; plus
    the PromQL of the Triton figures KEDA and the AMP alert rules evaluate."""
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
    lines = [f"**{t}**: `{q}`" for t, q in promql.figures(namespace, "<workload>").items()]
    widgets.append(
        {
            "type": "text",
            "x": 0,
            "y": 18,
            "width": 24,
            "height": 6,
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


@dataclass
class EksMonitoringArgs:
    """The cluster and workload monitored, and when to alert."""

    name: str
    region: str
    namespace: str
    job: str
    min_replicas: int
    alerts: AlertThresholds


class EksMonitoring(pulumi.ComponentResource):
    """AMP workspace, managed scraper (+ its cluster access), alert rules routed to SNS,
    Container Insights add-on, CloudWatch dashboard and alarms."""

    def __init__(
        self,
        name: str,
        args: EksMonitoringArgs,
        cluster: Any,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:aws:EksMonitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.workspace = aws.amp.Workspace(f"{name}-amp", alias=f"{args.name}-triton", opts=child)
        self._scraper(name, cluster, child)
        self.topic = aws.sns.Topic(f"{name}-alerts", opts=child)
        self._topic_policy(name, child)
        if args.alerts.email:
            aws.sns.TopicSubscription(
                f"{name}-email",
                topic=self.topic.arn,
                protocol="email",
                endpoint=args.alerts.email,
                opts=child,
            )
        rules = alert_rules(
            args.namespace,
            args.job,
            args.alerts.latency_slo_ms,
            args.alerts.error_rate_percent,
            args.alerts.queue_ratio,
        )
        aws.amp.RuleGroupNamespace(
            f"{name}-rules",
            workspace_id=self.workspace.id,
            data=rule_groups_yaml(rules),
            opts=child,
        )
        aws.amp.AlertManagerDefinition(
            f"{name}-alertmanager",
            workspace_id=self.workspace.id,
            definition=self.topic.arn.apply(lambda arn: alertmanager_yaml(arn, args.region)),
            opts=child,
        )
        self._cloudwatch(name, args, cluster, child)
        self.register_outputs({"workspaceId": self.workspace.id})

    def _scraper(self, name: str, cluster: Any, opts: pulumi.ResourceOptions) -> None:
        scraper = aws.amp.Scraper(
            f"{name}-scraper",
            source={
                "eks": {
                    "cluster_arn": cluster.cluster.arn,
                    "subnet_ids": cluster.network.private_subnet_ids,
                }
            },
            destination={"amp": {"workspace_arn": self.workspace.arn}},
            scrape_configuration=scrape_configuration(),
            opts=opts,
        )
        aws.eks.AccessEntry(
            f"{name}-scraper",
            cluster_name=cluster.cluster.name,
            principal_arn=scraper.role_arn,
            user_name=SCRAPER_USER,
            opts=opts,
        )
        on_cluster = pulumi.ResourceOptions(parent=self, provider=cluster.provider)
        for manifest in scraper_rbac():
            kind = manifest["kind"]
            resource = getattr(k8s.rbac.v1, kind)
            extra = (
                {"rules": manifest["rules"]}
                if kind == "ClusterRole"
                else {
                    "subjects": manifest["subjects"],
                    "role_ref": manifest["roleRef"],
                }
            )
            resource(
                f"{name}-{kind.lower()}", metadata=manifest["metadata"], **extra, opts=on_cluster
            )

    def _topic_policy(self, name: str, opts: pulumi.ResourceOptions) -> None:
        aws.sns.TopicPolicy(
            f"{name}-alerts",
            arn=self.topic.arn,
            policy=pulumi.Output.all(self.topic.arn, self.workspace.arn).apply(
                lambda v: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Sid": "AmpPublishes",
                                "Effect": "Allow",
                                "Principal": {"Service": "aps.amazonaws.com"},
                                "Action": ["sns:Publish", "sns:GetTopicAttributes"],
                                "Resource": v[0],
                                "Condition": {"ArnEquals": {"aws:SourceArn": v[1]}},
                            }
                        ],
                    }
                )
            ),
            opts=opts,
        )

    def _cloudwatch(
        self, name: str, args: EksMonitoringArgs, cluster: Any, opts: pulumi.ResourceOptions
    ) -> None:
        agent_role = cluster.irsa_role(f"{name}-cw-agent", CW_NAMESPACE, CW_AGENT_SA)
        attach = aws.iam.RolePolicyAttachment(
            f"{name}-cw-agent",
            role=agent_role.name,
            policy_arn="arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
            opts=opts,
        )
        aws.eks.Addon(
            f"{name}-container-insights",
            cluster_name=cluster.cluster.name,
            addon_name="amazon-cloudwatch-observability",
            service_account_role_arn=agent_role.arn,
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[attach, cluster.system_group, cluster.gpu_group]
            ),
        )
        self.dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{args.name}-triton",
            dashboard_body=self.workspace.id.apply(
                lambda ws: dashboard_json(args.name, args.namespace, args.region, ws)
            ),
            opts=opts,
        )
        for alarm in alarm_args(args.name, args.namespace, args.min_replicas):
            aws.cloudwatch.MetricAlarm(
                f"{name}-{alarm['name']}",
                alarm_actions=[self.topic.arn],
                **{k: v for k, v in alarm.items() if k != "name"},
                name=f"{args.name}-{alarm['name']}",
                opts=opts,
            )
        self.dashboard_url = (
            f"https://{args.region}.console.aws.amazon.com/cloudwatch/home?region={args.region}"
            f"#dashboards:name={args.name}-triton"
        )
