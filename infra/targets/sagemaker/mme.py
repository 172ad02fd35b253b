"""``tdk:aws:SageMakerMme``: a Triton multi-model endpoint with scaling, alarms and dashboard.

The component only wires resources; every argument comes from the pure builders beside it.
Model and EndpointConfiguration are auto-named, so a new release (a new ``ModelDataUrl``)
replaces them and updates the Endpoint in place: SageMaker rolls the update out blue/green
and rolls back if a rollback alarm fires while the new fleet bakes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from infra.clouds.aws.guardrails import budget_args
from infra.clouds.aws.sagemaker.iam import (
    assume_role_policy,
    endpoint_log_group,
    execution_policy,
)
from infra.clouds.aws.sagemaker.instances import InstanceKind
from infra.clouds.aws.sagemaker.metrics import VARIANT_NAME
from infra.clouds.aws.sagemaker.monitoring import (
    AlarmSpec,
    AlarmThresholds,
    alarm_specs,
    dashboard_body,
    dashboard_url,
)
from infra.clouds.aws.sagemaker.release_bucket import declare_release_bucket
from infra.config import ReleaseLocation
from infra.targets.sagemaker.rollout import Rollout, deployment_config
from infra.targets.sagemaker.scaling import ScalingSettings, scalable_target, scaling_policies
from infra.values.guardrails import Budget

TYPE_TOKEN = "tdk:aws:SageMakerMme"


@dataclass
class SageMakerMmeArgs:
    """Everything the endpoint needs, already validated and resolved (image URI, env)."""

    endpoint_name: str
    region: str
    image_uri: str
    #: ProductionVariant.InferenceAmiVersion (None: SageMaker's default, CPU instances)
    inference_ami_version: str | None
    instance: InstanceKind
    #: None: create a private release bucket and serve ``s3://<it>/<created_release_prefix>``
    release: ReleaseLocation | None
    environment: dict[str, str]
    scaling: ScalingSettings
    thresholds: AlarmThresholds
    rollout: Rollout
    alarm_email: str | None
    created_release_prefix: str
    budget: Budget | None
    log_retention_days: int


class SageMakerMme(pulumi.ComponentResource):
    """Model(MultiModel) -> EndpointConfiguration -> Endpoint, plus scaling and monitoring."""

    def __init__(
        self, name: str, args: SageMakerMmeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        release = self._release(name, args)
        self.release_url: pulumi.Output[str] = release.apply(lambda r: r.url)

        role = aws.iam.Role(name, assume_role_policy=json.dumps(assume_role_policy()), opts=child)
        policy = aws.iam.RolePolicy(
            name,
            role=role.id,
            policy=release.apply(
                lambda r: json.dumps(
                    execution_policy(r, args.image_uri, args.region, args.endpoint_name)
                )
            ),
            opts=child,
        )
        model = aws.sagemaker.Model(
            name,
            execution_role_arn=role.arn,
            primary_container={
                "image": args.image_uri,
                "mode": "MultiModel",
                "model_data_url": release.apply(lambda r: f"{r.url}/mme/"),
                "environment": args.environment,
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        config = aws.sagemaker.EndpointConfiguration(
            name,
            production_variants=[
                {
                    "variant_name": VARIANT_NAME,
                    "model_name": model.name,
                    "instance_type": args.instance.instance_type,
                    "initial_instance_count": args.scaling.min_instances,
                    "inference_ami_version": args.inference_ami_version,
                }
            ],
            opts=child,
        )
        alarms, topic = self._alarms(name, args, child)
        # Declared before the endpoint so SageMaker writes into a group with retention
        # (it would otherwise create one that keeps logs forever).
        logs = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=endpoint_log_group(args.endpoint_name),
            retention_in_days=args.log_retention_days,
            opts=child,
        )
        if args.budget is not None:
            aws.budgets.Budget(
                f"{name}-budget", **budget_args(args.endpoint_name, args.budget), opts=child
            )
        endpoint = aws.sagemaker.Endpoint(
            name,
            name=args.endpoint_name,
            endpoint_config_name=config.name,
            deployment_config=aws.sagemaker.EndpointDeploymentConfigArgs(
                **deployment_config(
                    args.rollout, [alarm.name for spec, alarm in alarms if spec.rollback]
                )
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[logs]),
        )
        self._scaling(name, args, endpoint)
        dashboard = aws.cloudwatch.Dashboard(
            name,
            dashboard_name=args.endpoint_name,
            dashboard_body=json.dumps(
                dashboard_body(args.endpoint_name, args.region, args.thresholds)
            ),
            opts=child,
        )
        self.endpoint_name: pulumi.Output[str] = endpoint.name
        self.role_arn: pulumi.Output[str] = role.arn
        self.dashboard_url: pulumi.Output[str] = dashboard.dashboard_name.apply(
            lambda dash: dashboard_url(args.region, dash)
        )
        self.alarm_topic_arn: pulumi.Output[str] | None = topic.arn if topic else None
        self.register_outputs(
            {
                "endpointName": self.endpoint_name,
                "releaseUrl": self.release_url,
                "roleArn": self.role_arn,
                "dashboardUrl": self.dashboard_url,
                "alarmTopicArn": self.alarm_topic_arn,
            }
        )

    def _release(self, name: str, args: SageMakerMmeArgs) -> pulumi.Output[ReleaseLocation]:
        if args.release is not None:
            return pulumi.Output.from_input(args.release)
        bucket = declare_release_bucket(name, self)
        return bucket.bucket.apply(lambda b: ReleaseLocation("s3", b, args.created_release_prefix))

    def _alarms(
        self, name: str, args: SageMakerMmeArgs, child: pulumi.ResourceOptions
    ) -> tuple[list[tuple[AlarmSpec, aws.cloudwatch.MetricAlarm]], aws.sns.Topic | None]:
        topic = None
        if args.alarm_email is not None:
            topic = aws.sns.Topic(f"{name}-alarms", opts=child)
            aws.sns.TopicSubscription(
                f"{name}-alarms", topic=topic.arn, protocol="email",
                endpoint=args.alarm_email, opts=child,
            )  # fmt: skip
        actions = [topic.arn] if topic else []
        alarms = []
        specs = alarm_specs(args.endpoint_name, args.thresholds, gpu=args.instance.gpus > 0)
        for spec in specs:
            alarm = aws.cloudwatch.MetricAlarm(
                f"{name}-{spec.key}",
                **spec.args,
                alarm_actions=actions,
                ok_actions=actions,
                opts=child,
            )
            alarms.append((spec, alarm))
        return alarms, topic

    def _scaling(self, name: str, args: SageMakerMmeArgs, endpoint: aws.sagemaker.Endpoint) -> None:
        target_args = scalable_target(args.endpoint_name, args.scaling)
        target = aws.appautoscaling.Target(
            name, **target_args, opts=pulumi.ResourceOptions(parent=self, depends_on=[endpoint])
        )
        for suffix, tracking in scaling_policies(args.endpoint_name, args.scaling).items():
            aws.appautoscaling.Policy(
                f"{name}-{suffix}",
                policy_type="TargetTrackingScaling",
                resource_id=target.resource_id,
                scalable_dimension=target.scalable_dimension,
                service_namespace=target.service_namespace,
                target_tracking_scaling_policy_configuration=(
                    aws.appautoscaling.PolicyTargetTrackingScalingPolicyConfigurationArgs(
                        **tracking
                    )
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
