"""``tdk:azure:AksMonitoring``: Azure Monitor managed Prometheus for Triton's metrics (KEDA, the
alert rules and the dashboard read it), the shared alert rules as a Prometheus rule group mailed
to ``alertEmail``, the dashboard (an Azure Monitor workbook), and the monthly budget.

Why managed Prometheus rather than Container Insights metrics: KEDA's Prometheus scaler
queries the workspace with its workload identity, so the ScaledObject runs the very PromQL it
runs on GKE and EKS, and the alert rules are the same PromQL (``infra.k8s.alerts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pulumi
import pulumi_azure_native as azure

import infra.facts
from infra.clouds.azure.guardrails import budget_args
from infra.k8s.alerts import workload_rules
from infra.k8s.config import AlertThresholds
from infra.targets.aks import arm
from infra.targets.aks.builders import rule_group_rules
from infra.targets.aks.workbook import workbook_json, workbook_name
from infra.values.guardrails import Budget


@dataclass
class AksMonitoringArgs:
    """The cluster and workload monitored, when to alert, and the budget."""

    name: str
    location: str
    resource_group: pulumi.Input[str]
    resource_group_id: pulumi.Input[str]
    cluster_id: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    namespace: str
    job: str
    alerts: AlertThresholds
    budget: Budget | None


class AksMonitoring(pulumi.ComponentResource):
    """Azure Monitor workspace (``workspace``; ``query_url`` its Prometheus API), the data
    collection endpoint, rule and association that send the cluster's scrapes there, the
    alert rule group and its action group, the dashboard workbook (``dashboard_url``), the
    budget."""

    def __init__(
        self, name: str, args: AksMonitoringArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:azure:AksMonitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        group, location = args.resource_group, args.location
        self.workspace = azure.monitor.AzureMonitorWorkspace(
            f"{name}-workspace",
            azure_monitor_workspace_name=f"{args.name}-prometheus",
            resource_group_name=group,
            location=location,
            opts=child,
        )
        self.query_url = self.workspace.metrics.apply(
            lambda m: m.prometheus_query_endpoint if m else ""
        )
        endpoint = azure.monitor.DataCollectionEndpoint(
            f"{name}-dce",
            data_collection_endpoint_name=f"{args.name}-prom",
            resource_group_name=group,
            location=location,
            kind="Linux",
            opts=child,
        )
        rule = azure.monitor.DataCollectionRule(
            f"{name}-dcr",
            data_collection_rule_name=f"{args.name}-prom",
            resource_group_name=group,
            location=location,
            **arm.prometheus_rule(endpoint.id, self.workspace.id),
            opts=child,
        )
        azure.monitor.DataCollectionRuleAssociation(
            f"{name}-dcra",
            association_name=arm.PROMETHEUS_ASSOCIATION,
            resource_uri=args.cluster_id,
            data_collection_rule_id=rule.id,
            opts=child,
        )
        actions = azure.monitor.ActionGroup(
            f"{name}-actions",
            action_group_name=f"{args.name}-alerts",
            resource_group_name=group,
            **arm.action_group(args.name, args.alerts.email),
            opts=child,
        )
        rules = workload_rules(args.namespace, args.job, args.alerts)
        azure.alertsmanagement.PrometheusRuleGroup(
            f"{name}-rules",
            rule_group_name=f"{args.name}-triton",
            resource_group_name=group,
            location=location,
            cluster_name=args.cluster_name,
            scopes=[self.workspace.id],
            interval="PT1M",
            enabled=True,
            rules=cast(Any, rule_group_rules(rules, actions.id)),
            opts=child,
        )
        self.workbook = azure.applicationinsights.Workbook(
            f"{name}-workbook",
            resource_name_=workbook_name(args.name),
            resource_group_name=group,
            location=location,
            kind="shared",
            category="workbook",
            display_name=f"{args.name} Triton",
            source_id=self.workspace.id,
            serialized_data=self.workspace.id.apply(
                lambda ws: workbook_json(
                    f"{args.name} Triton", args.namespace, args.job, args.alerts.multi_model, ws
                )
            ),
            opts=child,
        )
        self.dashboard_url = pulumi.Output.concat(
            "https://portal.azure.com/#resource", self.workbook.id, "/workbook"
        )
        if args.budget is not None:
            azure.consumption.Budget(
                f"{name}-budget",
                **budget_args(args.name, args.budget, args.resource_group_id, infra.facts.today()),
                opts=pulumi.ResourceOptions(parent=self, ignore_changes=["timePeriod"]),
            )
        self.register_outputs(
            {
                "workspaceId": self.workspace.id,
                "queryUrl": self.query_url,
                "dashboardUrl": self.dashboard_url,
            }
        )
