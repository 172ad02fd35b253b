"""What the program declares, as the AWS API requests the providers will send (pure).

Each function takes a resource's inputs as the Pulumi engine sees them (camelCase keys;
numbers may arrive as floats) and returns the request of the API operation that creates it,
so a test can validate it against botocore's own service model. It documents the mapping:

| resource                                   | operation                              |
| ------------------------------------------ | -------------------------------------- |
| aws-native:sagemaker:InferenceComponent    | sagemaker CreateInferenceComponent     |
|   (its deploymentConfig)                   | sagemaker UpdateInferenceComponent     |
| aws:sagemaker/endpointConfiguration        | sagemaker CreateEndpointConfig         |
| aws:sagemaker/model                        | sagemaker CreateModel                  |
| aws:appautoscaling/target                  | application-autoscaling RegisterScalableTarget |
| aws:appautoscaling/policy                  | application-autoscaling PutScalingPolicy |
| aws:cloudwatch/metricAlarm                 | cloudwatch PutMetricAlarm              |
"""

from __future__ import annotations

from typing import Any

Request = dict[str, Any]


def plain(value: Any) -> Any:
    """Integral floats back to ints, recursively (the engine hands every number as a float)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def pascal(value: Any, renames: dict[str, str] | None = None) -> Any:
    """camelCase keys -> the API's PascalCase, recursively; ``renames`` for keys that differ."""
    renames = renames or {}
    if isinstance(value, dict):
        return {renames.get(k, k[:1].upper() + k[1:]): pascal(v, renames) for k, v in value.items()}
    if isinstance(value, list):
        return [pascal(v, renames) for v in value]
    return plain(value)


def create_inference_component(inputs: dict[str, Any]) -> Request:
    """CreateInferenceComponent (the deployment config goes with updates, see below)."""
    request = {k: v for k, v in inputs.items() if k != "deploymentConfig"}
    return dict(pascal(request))


def update_deployment_config(inputs: dict[str, Any]) -> Request:
    """UpdateInferenceComponent carrying the component's rolling-update DeploymentConfig."""
    return {
        "InferenceComponentName": inputs["inferenceComponentName"],
        "DeploymentConfig": pascal(inputs["deploymentConfig"]),
    }


def create_endpoint_config(inputs: dict[str, Any], name: str) -> Request:
    """CreateEndpointConfig (``name``: what the provider auto-names it from); the provider's
    ``routingConfigs`` list is the API's one RoutingConfig."""
    variants = []
    for variant in inputs["productionVariants"]:
        body = dict(variant)
        routing = body.pop("routingConfigs", None)
        if routing:
            body["routingConfig"] = routing[0]
        variants.append(pascal(body))
    request: Request = {
        "EndpointConfigName": inputs.get("name", name),
        "ProductionVariants": variants,
    }
    if "executionRoleArn" in inputs:
        request["ExecutionRoleArn"] = inputs["executionRoleArn"]
    return request


def register_scalable_target(inputs: dict[str, Any]) -> Request:
    """RegisterScalableTarget."""
    keys = ("serviceNamespace", "resourceId", "scalableDimension", "minCapacity", "maxCapacity")
    return dict(pascal({k: inputs[k] for k in keys}))


def put_scaling_policy(inputs: dict[str, Any], name: str) -> Request:
    """PutScalingPolicy (``name`` as for endpoint configs); step bounds are strings in the
    provider and doubles in the API."""
    request: Request = {
        "PolicyName": inputs.get("name", name),
        **pascal({k: inputs[k] for k in ("serviceNamespace", "resourceId", "scalableDimension")}),
        "PolicyType": inputs["policyType"],
    }
    if "targetTrackingScalingPolicyConfiguration" in inputs:
        request["TargetTrackingScalingPolicyConfiguration"] = pascal(
            inputs["targetTrackingScalingPolicyConfiguration"]
        )
    if "stepScalingPolicyConfiguration" in inputs:
        step = dict(inputs["stepScalingPolicyConfiguration"])
        step["stepAdjustments"] = [
            {k: float(v) if k.startswith("metricInterval") else v for k, v in adjustment.items()}
            for adjustment in step["stepAdjustments"]
        ]
        request["StepScalingPolicyConfiguration"] = pascal(step)
    return request


def _dimensions(dimensions: dict[str, str]) -> list[dict[str, str]]:
    return [{"Name": name, "Value": value} for name, value in dimensions.items()]


def _query(query: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = pascal({k: v for k, v in query.items() if k != "metric"})
    if "metric" in query:
        metric = query["metric"]
        out["MetricStat"] = {
            "Metric": {
                "Namespace": metric["namespace"],
                "MetricName": metric["metricName"],
                "Dimensions": _dimensions(metric.get("dimensions", {})),
            },
            "Period": plain(metric["period"]),
            "Stat": metric["stat"],
        }
    return out


def put_metric_alarm(inputs: dict[str, Any]) -> Request:
    """PutMetricAlarm; provider dimensions are a map, the API's a Name/Value list."""
    renames = {"okActions": "OKActions"}
    skip = {"dimensions", "metricQueries", "name"}
    request: Request = {"AlarmName": inputs["name"]}
    request.update(pascal({k: v for k, v in inputs.items() if k not in skip}, renames))
    if "dimensions" in inputs:
        request["Dimensions"] = _dimensions(inputs["dimensions"])
    if "metricQueries" in inputs:
        request["Metrics"] = [_query(q) for q in inputs["metricQueries"]]
    return request


#: what the provider appends to an auto-named resource (``-`` and 7 random characters)
AUTONAME_SAMPLE = "-0a1b2c3"


def create_model(inputs: dict[str, Any], name: str) -> Request:
    """CreateModel of a component's model (``name`` + the provider's random suffix)."""
    container = dict(inputs["primaryContainer"])
    source = container.pop("modelDataSource", None)
    primary = pascal(container)
    if source is not None:  # the provider's s3DataSources list is the API's one S3DataSource
        (s3,) = source["s3DataSources"]
        primary["ModelDataSource"] = {"S3DataSource": pascal(s3)}
    return {
        "ModelName": inputs.get("name", name + AUTONAME_SAMPLE),
        "PrimaryContainer": primary,
        "ExecutionRoleArn": inputs["executionRoleArn"],
    }
