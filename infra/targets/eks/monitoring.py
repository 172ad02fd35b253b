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

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from infra.clouds.aws.guardrails import budget_args
from infra.k8s.addons import KEDA_NAMESPACE, KEDA_OPERATOR_SA
from infra.k8s.alerts import rules_yaml, workload_rules
from infra.k8s.config import AlertThresholds
from infra.k8s.refs import PodIdentity
from infra.targets.eks.builders import (
    amp_query_policy,
    container_insights_log_groups,
    keda_pod_identity,
)
from infra.targets.eks.cluster import EksClusterRef, irsa_role, moved_from
from infra.targets.eks.observability import (
    CW_AGENT_SA,
    CW_NAMESPACE,
    alarm_args,
    alertmanager_yaml,
    dashboard_json,
    scrape_configuration,
    scraper_rbac,
)
from infra.values.guardrails import Budget


@dataclass
class EksMonitoringArgs:
    """The cluster and workload monitored, and when to alert."""

    name: str
    region: str
    namespace: str
    job: str
    min_replicas: int
    alerts: AlertThresholds
    budget: Budget | None
    log_retention_days: int


class EksMonitoring(pulumi.ComponentResource):
    """AMP workspace, managed scraper (+ its cluster access), the IRSA role KEDA queries the
    workspace as (``keda_identity``), alert rules routed to SNS, Container Insights add-on,
    CloudWatch dashboard and alarms."""

    def __init__(
        self,
        name: str,
        args: EksMonitoringArgs,
        cluster: EksClusterRef,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:aws:EksMonitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.workspace = aws.amp.Workspace(f"{name}-amp", alias=f"{args.name}-triton", opts=child)
        self._scraper(name, cluster, child)
        self._keda_identity(args, cluster)
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
        rules = workload_rules(args.namespace, args.job, args.alerts)
        aws.amp.RuleGroupNamespace(
            f"{name}-rules",
            workspace_id=self.workspace.id,
            data=rules_yaml(rules),
            opts=child,
        )
        aws.amp.AlertManagerDefinition(
            f"{name}-alertmanager",
            workspace_id=self.workspace.id,
            definition=self.topic.arn.apply(lambda arn: alertmanager_yaml(arn, args.region)),
            opts=child,
        )
        self._cloudwatch(name, args, cluster, child)
        if args.budget is not None:
            aws.budgets.Budget(f"{name}-budget", **budget_args(args.name, args.budget), opts=child)
        self.register_outputs({"workspaceId": self.workspace.id})

    def _keda_identity(self, args: EksMonitoringArgs, cluster: EksClusterRef) -> None:
        """KEDA's operator queries the workspace (and only it) through IRSA."""
        opts = pulumi.ResourceOptions.merge(
            pulumi.ResourceOptions(parent=self), moved_from(cluster)
        )
        role = irsa_role(f"{args.name}-keda", cluster, KEDA_NAMESPACE, KEDA_OPERATOR_SA, opts)
        query = aws.iam.RolePolicy(
            f"{args.name}-keda-amp-query",
            role=role.id,
            policy=self.workspace.arn.apply(amp_query_policy),
            opts=opts,
        )
        # KEDA starts once it may query the workspace (its first scaling query would 403)
        self.keda_identity = PodIdentity(keda_pod_identity(role.arn), ready=[query])

    def _scraper(self, name: str, cluster: EksClusterRef, opts: pulumi.ResourceOptions) -> None:
        """The managed scraper, as AMP's collector guide sets it up: ENIs in the cluster's
        private subnets with the cluster security group (which admits traffic from itself, so
        the nodes' Triton metrics port 8002 is reachable). AMP creates the scraper's EKS
        access entry for ``aps-collector-user`` itself (declaring one too is a 409); the
        stack declares only the RBAC that user needs."""
        aws.amp.Scraper(
            f"{name}-scraper",
            source={
                "eks": {
                    "cluster_arn": cluster.arn,
                    "subnet_ids": list(cluster.private_subnet_ids),
                    "security_group_ids": [cluster.security_group_id],
                }
            },
            destination={"amp": {"workspace_arn": self.workspace.arn}},
            scrape_configuration=scrape_configuration(),
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
        self,
        name: str,
        args: EksMonitoringArgs,
        cluster: EksClusterRef,
        opts: pulumi.ResourceOptions,
    ) -> None:
        agent_role = irsa_role(
            f"{name}-cw-agent",
            cluster,
            CW_NAMESPACE,
            CW_AGENT_SA,
            pulumi.ResourceOptions.merge(opts, moved_from(cluster)),
        )
        attach = aws.iam.RolePolicyAttachment(
            f"{name}-cw-agent",
            role=agent_role.name,
            policy_arn="arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
            opts=opts,
        )
        # the add-on's log groups, declared first so they have a retention
        log_groups = [
            aws.cloudwatch.LogGroup(
                f"{name}-{group.rsplit('/', 1)[-1]}-logs",
                name=group,
                retention_in_days=args.log_retention_days,
                opts=opts,
            )
            for group in container_insights_log_groups(args.name)
        ]
        aws.eks.Addon(
            f"{name}-container-insights",
            cluster_name=cluster.name,
            addon_name="amazon-cloudwatch-observability",
            service_account_role_arn=agent_role.arn,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[attach, *cluster.node_groups, *log_groups],
            ),
        )
        self.dashboard = aws.cloudwatch.Dashboard(
            f"{name}-dashboard",
            dashboard_name=f"{args.name}-triton",
            dashboard_body=self.workspace.id.apply(
                lambda ws: dashboard_json(
                    args.name, args.namespace, args.region, ws, args.alerts.multi_model
                )
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
