"""``tdk:aws:SageMakerInferenceComponents``: an endpoint whose models are inference components.

The endpoint's one variant has no model: each model copy gets its own ``aws.sagemaker.Model``
(the Triton image on that copy's archive) and one ``aws-native:sagemaker:InferenceComponent``
reserving GPUs, cores and memory per copy, copy-count autoscaling (to and from zero), rolling
updates rolled back by the component's alarms, and a row on the dashboard.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_aws_native as aws_native

from infra.clouds.aws.guardrails import budget_args
from infra.clouds.aws.sagemaker.iam import assume_role_policy, endpoint_log_group, execution_policy
from infra.clouds.aws.sagemaker.instances import InstanceKind, triton_image
from infra.clouds.aws.sagemaker.monitoring import dashboard_url
from infra.clouds.aws.sagemaker.release_bucket import bucket_prefix, declare_release_bucket
from infra.config import ReleaseLocation
from infra.targets.sagemaker_ic import builders, monitoring, scaling
from infra.targets.sagemaker_ic.config import ComponentSpec, SageMakerIcConfig
from infra.values.names import cut_name

TYPE_TOKEN = "tdk:aws:SageMakerInferenceComponents"


def resource_name(stack: str, component: str) -> str:
    """A Pulumi name for a per-component resource whose auto-name stays within 63 characters
    (the provider appends 8): long names are cut and made unique by a hash."""
    return cut_name(stack, component)


def _primary_container(args: dict[str, Any]) -> aws.sagemaker.ModelPrimaryContainerArgs:
    """The builder's container as the provider's types: a dict two levels down
    (``model_data_source.s3_data_sources[]``) would reach the provider with snake_case keys."""
    source = args.pop("model_data_source", None)
    if source is not None:
        args["model_data_source"] = aws.sagemaker.ModelPrimaryContainerModelDataSourceArgs(
            s3_data_sources=[
                aws.sagemaker.ModelPrimaryContainerModelDataSourceS3DataSourceArgs(**s3)
                for s3 in source["s3_data_sources"]
            ]
        )
    return aws.sagemaker.ModelPrimaryContainerArgs(**args)


class SageMakerInferenceComponents(pulumi.ComponentResource):
    """Role -> EndpointConfiguration (no model) -> Endpoint -> per copy: Model, component,
    scaling, alarms; one dashboard."""

    def __init__(
        self, name: str, config: SageMakerIcConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self._name = name
        self._config = config
        endpoint_name = config.common.name
        kind = InstanceKind(config.instance.instance_type, "gpu", config.instance.gpus)
        self._image = triton_image(config.region, config.triton_version, kind)
        release = self._release()
        self.release_url: pulumi.Output[str] = release.apply(lambda r: r.url)
        self._role, policy = self._role_and_policy(release, endpoint_name)
        child = pulumi.ResourceOptions(parent=self)
        self._topic = self._alarm_topic()
        endpoint = self._endpoint(policy)
        self.components: dict[str, pulumi.Output[str]] = {}
        declared = () if config.awaiting is not None else config.components
        for spec in declared:
            self._component(spec, endpoint, release, policy)
        self.next_step: pulumi.Output[str] | None = self._next_step()
        dashboard = aws.cloudwatch.Dashboard(
            name,
            dashboard_name=endpoint_name,
            dashboard_body=json.dumps(
                monitoring.dashboard_body(config.region, list(declared), config.thresholds)
            ),
            opts=child,
        )
        self.endpoint_name: pulumi.Output[str] = endpoint.name
        self.role_arn: pulumi.Output[str] = self._role.arn
        self.dashboard_url: pulumi.Output[str] = dashboard.dashboard_name.apply(
            lambda dash: dashboard_url(config.region, dash)
        )
        self.alarm_topic_arn: pulumi.Output[str] | None = (
            self._topic.arn if self._topic is not None else None
        )
        self.register_outputs(
            {
                "endpointName": self.endpoint_name,
                "releaseUrl": self.release_url,
                "roleArn": self.role_arn,
                "dashboardUrl": self.dashboard_url,
                "inferenceComponents": self.components,
            }
        )

    def _next_step(self) -> pulumi.Output[str] | None:
        """While no release is published: a warning, and the commands that publish it and
        declare the components (the release URL is the stack's bucket when it creates one)."""
        awaiting = self._config.awaiting
        if awaiting is None:
            return None
        pulumi.log.warn(builders.AWAITING_WARNING, resource=self)
        url = pulumi.Output.from_input(awaiting.url) if awaiting.url else self.release_url
        stack = pulumi.get_stack()
        return url.apply(lambda u: builders.next_step(u, awaiting.key, stack))

    def _endpoint(self, policy: aws.iam.RolePolicy) -> aws.sagemaker.Endpoint:
        """The endpoint config (one variant, no model), its log group, budget and endpoint."""
        config, name = self._config, self._name
        endpoint_name, child = config.common.name, pulumi.ResourceOptions(parent=self)
        variant = builders.endpoint_variant(
            config.instance.instance_type, config.scaling, config.inference_ami_version
        )
        endpoint_config = aws.sagemaker.EndpointConfiguration(
            name,
            execution_role_arn=self._role.arn,
            production_variants=[
                aws.sagemaker.EndpointConfigurationProductionVariantArgs(**variant)
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        # Declared before the endpoint so SageMaker writes into a group with retention.
        logs = aws.cloudwatch.LogGroup(
            f"{name}-logs",
            name=endpoint_log_group(endpoint_name),
            retention_in_days=config.log_retention_days,
            opts=child,
        )
        if config.budget is not None:
            aws.budgets.Budget(
                f"{name}-budget", **budget_args(endpoint_name, config.budget), opts=child
            )
        return aws.sagemaker.Endpoint(
            name,
            name=endpoint_name,
            endpoint_config_name=endpoint_config.name,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[logs]),
        )

    def _release(self) -> pulumi.Output[ReleaseLocation]:
        """The release the stack names, else one in a bucket the stack creates. A releaseUrl
        in that bucket (nextStep sets it once the first up made it) keeps it declared."""
        named = self._config.common.release
        if named is not None and not named.bucket.startswith(bucket_prefix(self._name)):
            return pulumi.Output.from_input(named)
        bucket = declare_release_bucket(self._name, self)
        if named is not None:
            return pulumi.Output.from_input(named)
        prefix = self._config.created_release_prefix
        return bucket.bucket.apply(lambda b: ReleaseLocation("s3", b, prefix))

    def _role_and_policy(
        self, release: pulumi.Output[ReleaseLocation], endpoint: str
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicy]:
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            self._name, assume_role_policy=json.dumps(assume_role_policy()), opts=child
        )
        image, region = self._image, self._config.region
        prefixes = builders.release_prefixes(self._config.components)
        policy = aws.iam.RolePolicy(
            self._name,
            role=role.id,
            policy=release.apply(
                lambda r: json.dumps(execution_policy(r, image, region, endpoint, prefixes))
            ),
            opts=child,
        )
        return role, policy

    def _alarm_topic(self) -> aws.sns.Topic | None:
        email = self._config.alarm_email
        if email is None:
            return None
        child = pulumi.ResourceOptions(parent=self)
        topic = aws.sns.Topic(f"{self._name}-alarms", opts=child)
        aws.sns.TopicSubscription(
            f"{self._name}-alarms", topic=topic.arn, protocol="email", endpoint=email, opts=child
        )
        return topic

    def _component(
        self,
        spec: ComponentSpec,
        endpoint: aws.sagemaker.Endpoint,
        release: pulumi.Output[ReleaseLocation],
        policy: aws.iam.RolePolicy,
    ) -> None:
        config, base = self._config, resource_name(self._name, spec.component)
        child = pulumi.ResourceOptions(parent=self)
        model = aws.sagemaker.Model(
            base,
            execution_role_arn=self._role.arn,
            primary_container=release.apply(
                lambda r: _primary_container(
                    builders.model_container(self._image, r.url, spec, config.environment)
                )
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        actions = [self._topic.arn] if self._topic is not None else []
        rollback = []
        for alarm_spec in monitoring.alarm_specs(config.common.name, spec, config.thresholds):
            alarm = aws.cloudwatch.MetricAlarm(
                f"{base}-{alarm_spec.key}", **alarm_spec.args,
                alarm_actions=actions, ok_actions=actions, opts=child,
            )  # fmt: skip
            if alarm_spec.rollback:
                rollback.append(alarm.name)
        args = builders.component_args(spec, endpoint.name, model.name, config.startup)
        args["deployment_config"] = builders.deployment_config(config.rolling, rollback)
        component = aws_native.sagemaker.InferenceComponent(
            base,
            aws_native.sagemaker.InferenceComponentArgs(**args),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[endpoint]),
        )
        self.components[spec.copy] = component.inference_component_name.apply(str)
        self._scaling(base, spec, component)

    def _scaling(
        self, base: str, spec: ComponentSpec, component: aws_native.sagemaker.InferenceComponent
    ) -> None:
        target = aws.appautoscaling.Target(
            base,
            **scaling.scalable_target(spec),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[component]),
        )
        child = pulumi.ResourceOptions(parent=self)
        aws.appautoscaling.Policy(
            f"{base}-concurrency",
            aws.appautoscaling.PolicyArgs(
                resource_id=target.resource_id,
                scalable_dimension=target.scalable_dimension,
                service_namespace=target.service_namespace,
                policy_type="TargetTrackingScaling",
                target_tracking_scaling_policy_configuration=(
                    aws.appautoscaling.PolicyTargetTrackingScalingPolicyConfigurationArgs(
                        **scaling.tracking_policy(self._config.scaling)
                    )
                ),
            ),
            opts=child,
        )
        if not spec.scales_to_zero:
            return
        wake = aws.appautoscaling.Policy(
            f"{base}-wake",
            aws.appautoscaling.PolicyArgs(
                resource_id=target.resource_id,
                scalable_dimension=target.scalable_dimension,
                service_namespace=target.service_namespace,
                policy_type="StepScaling",
                step_scaling_policy_configuration=(
                    aws.appautoscaling.PolicyStepScalingPolicyConfigurationArgs(
                        **scaling.wake_policy(self._config.scaling)
                    )
                ),
            ),
            opts=child,
        )
        aws.cloudwatch.MetricAlarm(
            f"{base}-no-capacity",
            **scaling.no_capacity_alarm(self._config.common.name, spec),
            alarm_actions=[wake.arn],
            opts=child,
        )


def declare_stack(config: SageMakerIcConfig) -> dict[str, Any]:
    """Declare the stack; the outputs ``pulumi stack output`` shows."""
    endpoint = config.common.name
    stack = SageMakerInferenceComponents(endpoint, config)
    outputs: dict[str, Any] = {
        "endpointName": stack.endpoint_name,
        "region": config.region,
        "releaseUrl": stack.release_url,
        "dashboardUrl": stack.dashboard_url,
        "roleArn": stack.role_arn,
        "inferenceComponents": stack.components,
        "invokeCommand": stack.release_url.apply(
            lambda url: builders.invoke_command(config.common.target, endpoint, config.region, url)
        ),
    }
    if stack.alarm_topic_arn is not None:
        outputs["alarmTopicArn"] = stack.alarm_topic_arn
    if stack.next_step is not None:
        outputs["nextStep"] = stack.next_step
    return outputs
