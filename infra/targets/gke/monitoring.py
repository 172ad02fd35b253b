"""Per-workload Google Cloud resources: the identity that reads a release, and monitoring."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from infra.clouds.gcp import identity
from infra.clouds.gcp.guardrails import budget_args
from infra.config import ReleaseLocation
from infra.k8s.alerts import workload_rules
from infra.k8s.config import AlertThresholds
from infra.targets.gke import builders as b
from infra.values.guardrails import Budget


@dataclass
class ReleaseReaderArgs:
    """Who reads (the Kubernetes ServiceAccount) and what (the release prefix)."""

    name: str
    project: str
    release: ReleaseLocation
    namespace: str
    service_account: str
    #: the enabled Google APIs, waited for
    services: Sequence[pulumi.Resource] = field(default_factory=list)


class ReleaseReader(pulumi.ComponentResource):
    """A Google service account that may read only the release prefix (and the bucket's
    metadata, which Triton's GCS reader asks first), usable only by one
    Kubernetes ServiceAccount through Workload Identity (no keys are ever created). It writes
    nothing, the engine cache included: that is the ``EngineBuilder``'s alone."""

    def __init__(
        self,
        name: str,
        args: ReleaseReaderArgs,
        cluster: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:gcp:ReleaseReader", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.services))
        self.account = gcp.serviceaccount.Account(
            f"{name}-gsa",
            account_id=b.triton_account_id(args.name),
            display_name=b.sa_display_name(f"{args.name} Triton (reads {args.release.url})"),
            project=args.project,
            opts=child,
        )
        self.email = identity.service_account_email(b.triton_account_id(args.name), args.project)
        gcp.storage.BucketIAMMember(
            f"{name}-release-read",
            bucket=args.release.bucket,
            role="roles/storage.objectViewer",
            member=f"serviceAccount:{self.email}",
            condition=gcp.storage.BucketIAMMemberConditionArgs(
                **b.release_read_condition(args.release.bucket, args.release.prefix)
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.account]),
        )
        gcp.storage.BucketIAMMember(  # Triton's GCS reader gets the bucket's metadata first
            f"{name}-bucket-metadata",
            bucket=args.release.bucket,
            role=b.BUCKET_METADATA_ROLE,
            member=f"serviceAccount:{self.email}",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.account]),
        )
        gcp.serviceaccount.IAMMember(
            f"{name}-wi",
            service_account_id=self.account.name,
            role=identity.WORKLOAD_IDENTITY_USER,
            member=identity.workload_identity_member(
                args.project, args.namespace, args.service_account
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster]),
        )
        self.register_outputs({"email": self.email})


@dataclass
class MonitoringArgs:
    """The workload whose Triton metrics are charted and alerted on."""

    name: str
    project: str
    namespace: str
    job: str
    alerts: AlertThresholds
    #: the enabled Google APIs, waited for
    services: Sequence[pulumi.Resource] = field(default_factory=list)
    #: a billing budget for the project (declared only with a billing account)
    budget: Budget | None = None
    billing_account: str | None = None


class Monitoring(pulumi.ComponentResource):
    """Cloud Monitoring dashboard and PromQL alert policies over Managed Prometheus data."""

    def __init__(
        self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tdk:gcp:Monitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.services))
        self.dashboard = gcp.monitoring.Dashboard(
            f"{name}-dashboard",
            dashboard_json=b.dashboard_json(
                f"{args.name} Triton", args.namespace, args.job, args.alerts.multi_model
            ),
            project=args.project,
            opts=child,
        )
        channels: list[pulumi.Output[str]] = []
        if args.alerts.email:
            channel = gcp.monitoring.NotificationChannel(
                f"{name}-email",
                type="email",
                display_name=f"{args.name} alerts",
                labels={"email_address": args.alerts.email},
                project=args.project,
                opts=child,
            )
            channels.append(channel.id)
        rules = workload_rules(args.namespace, args.job, args.alerts)
        self.policies = [
            gcp.monitoring.AlertPolicy(
                f"{name}-{rule.name}",
                project=args.project,
                **b.alert_policy_args(rule, list(channels)),
                opts=child,
            )
            for rule in rules
        ]
        if args.budget is not None and args.billing_account is not None:
            project = gcp.organizations.get_project_output(project_id=args.project)
            gcp.billing.Budget(
                f"{name}-budget",
                **budget_args(
                    args.name,
                    args.budget,
                    args.billing_account,
                    project.number.apply(lambda number: f"projects/{number}"),
                    list(channels),
                ),
                opts=child,
            )
        self.dashboard_url = self.dashboard.id.apply(
            lambda d: (
                f"https://console.cloud.google.com/monitoring/dashboards/builder/"
                f"{d.split('/')[-1]}?project={args.project}"
            )
        )
        self.register_outputs({"dashboardUrl": self.dashboard_url})
