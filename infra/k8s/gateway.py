"""``k8sModelMode: mme``: Envoy Gateway routes each TargetModel to the pod that holds it.

One engine on every cloud (a cloud's own load balancers may hash a header only when internal):
Envoy Gateway, installed with the cluster add-ons from its pinned Helm chart, with a Gateway,
an HTTPRoute to the workload's front and a BackendTrafficPolicy hashing consistently on
``X-Amzn-SageMaker-Target-Model`` (Maglev). Facts, checked 2026-12-07:

- Chart ``oci://docker.io/envoyproxy/gateway-helm`` v1.9.3 (published 2026-10-03,
  envoyproxy/gateway ``site/content/en/news/releases/notes/v1.9.3.md``); the v1.9 line supports
  Kubernetes 1.33, 1.34, 1.35 and 1.36, Gateway API v1.6.1, end of life 2027-02-14
  (``site/content/en/news/releases/matrix.md``, https://gateway.envoyproxy.io/news/releases/
  matrix/). The default chart installs the Gateway API and Envoy Gateway CRDs.
- ``consistentHash.type: Header`` is deprecated for ``Headers`` (``api/v1alpha1/
  loadbalancer_types.go`` at v1.9.0): the kit writes ``Headers``.
- Bounded load: the BackendTrafficPolicy API has no ``hash_balance_factor`` (no such field in
  ``loadbalancer_types.go`` at v1.9.0; asked in envoyproxy/gateway#8467). Envoy Gateway renders
  a ConsistentHash cluster with the ``envoy.load_balancing_policies.maglev`` policy
  (``internal/xds/translator/cluster.go``), whose ``Maglev.consistent_hashing_lb_config.
  hash_balance_factor`` bounds each host's load (envoy ``api/envoy/extensions/
  load_balancing_policies/maglev/v3/maglev.proto``). The supported way to set it is an
  EnvoyPatchPolicy (JSONPatch on the xDS Cluster), enabled in the EnvoyGateway config
  (``extensionApis.enableEnvoyPatchPolicy``; https://gateway.envoyproxy.io/latest/tasks/
  extensibility/envoy-patch-policy/). The route's cluster is named
  ``httproute/<namespace>/<name>/rule/<index>`` (``internal/gatewayapi/helpers.go``
  ``irRouteDestinationName``).
- The factor is issue 46's 150 (``infra.planning.routing.HASH_BALANCE_FACTOR``); the local
  proof's HAProxy runs the factor that is never looser than it (Envoy admits a request while a
  host holds at most its slots, HAProxy while a server holds fewer than its share).
"""

from __future__ import annotations

from typing import Any

from infra.k8s.mme import SERVICE_PORT
from infra.k8s.spec import FRONT_PORT, TritonServiceSpec
from infra.planning.routing import HASH_BALANCE_FACTOR

Manifest = dict[str, Any]

GATEWAY_CHART = "gateway-helm"
GATEWAY_REPO = "oci://docker.io/envoyproxy"
GATEWAY_CHART_VERSION = "v1.9.3"
#: the Kubernetes minors the pinned chart's line supports (compatibility matrix, above)
GATEWAY_KUBERNETES_MINORS = (33, 36)
GATEWAY_MATRIX = "https://gateway.envoyproxy.io/news/releases/matrix/, checked 2026-12-07"
GATEWAY_NAMESPACE = "envoy-gateway-system"
CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
#: the header SageMaker's contract names the copy with
TARGET_MODEL_HEADER = "X-Amzn-SageMaker-Target-Model"
#: a cold request waits for a download and a load: far longer than Envoy's 15 s default
ROUTE_TIMEOUT = "600s"
GATEWAY_GROUP = "gateway.networking.k8s.io"
GATEWAY_API = f"{GATEWAY_GROUP}/v1"
ENVOY_API = "gateway.envoyproxy.io/v1alpha1"


def gateway_values() -> dict[str, Any]:
    """Helm values of the Envoy Gateway release: EnvoyPatchPolicy on (the bounded load)."""
    return {"config": {"envoyGateway": {"extensionApis": {"enableEnvoyPatchPolicy": True}}}}


def _metadata(spec: TritonServiceSpec, **extra: Any) -> dict[str, Any]:
    return {"name": spec.name, "namespace": spec.namespace, "labels": spec.labels, **extra}


def gateway_class(spec: TritonServiceSpec) -> Manifest:
    """The workload's GatewayClass, served by Envoy Gateway (cluster-scoped)."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "GatewayClass",
        "metadata": {"name": spec.name, "labels": spec.labels},
        "spec": {"controllerName": CONTROLLER},
    }


def envoy_proxy(spec: TritonServiceSpec) -> Manifest:
    """The proxies' Service as ``k8sServiceExposure`` asks: in the cluster, or behind the
    cloud's (internal) load balancer with the target's annotations."""
    service: dict[str, Any] = {
        "type": "ClusterIP" if spec.exposure == "cluster-ip" else "LoadBalancer"
    }
    if spec.service_annotations:
        service["annotations"] = dict(spec.service_annotations)
    return {
        "apiVersion": ENVOY_API,
        "kind": "EnvoyProxy",
        "metadata": _metadata(spec),
        "spec": {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": service}}},
    }


def gateway(spec: TritonServiceSpec) -> Manifest:
    """One HTTP listener on the front's port, its proxies configured by ``envoy_proxy``."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": _metadata(spec),
        "spec": {
            "gatewayClassName": spec.name,
            "infrastructure": {
                "parametersRef": {
                    "group": "gateway.envoyproxy.io",
                    "kind": "EnvoyProxy",
                    "name": spec.name,
                }
            },
            "listeners": [{"name": "http", "protocol": "HTTP", "port": FRONT_PORT}],
        },
    }


def http_route(spec: TritonServiceSpec) -> Manifest:
    """Every request to the workload's fronts (one rule, so one cluster to hash over)."""
    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": _metadata(spec),
        "spec": {
            "parentRefs": [{"name": spec.name}],
            "rules": [
                {
                    "backendRefs": [{"name": spec.name, "port": SERVICE_PORT["port"]}],
                    "timeouts": {"request": ROUTE_TIMEOUT},
                }
            ],
        },
    }


def _route_ref(spec: TritonServiceSpec) -> dict[str, str]:
    return {"group": GATEWAY_GROUP, "kind": "HTTPRoute", "name": spec.name}


def backend_traffic_policy(spec: TritonServiceSpec) -> Manifest:
    """Consistent hashing on the TargetModel header: a copy's requests reach the pod that
    loaded it (Maglev; a pod joining or leaving moves only its share)."""
    return {
        "apiVersion": ENVOY_API,
        "kind": "BackendTrafficPolicy",
        "metadata": _metadata(spec),
        "spec": {
            "targetRefs": [_route_ref(spec)],
            "loadBalancer": {
                "type": "ConsistentHash",
                "consistentHash": {"type": "Headers", "headers": [{"name": TARGET_MODEL_HEADER}]},
            },
        },
    }


def route_cluster(spec: TritonServiceSpec) -> str:
    """The xDS Cluster Envoy Gateway builds for the route's one rule."""
    return f"httproute/{spec.namespace}/{spec.name}/rule/0"


def envoy_patch_policy(spec: TritonServiceSpec) -> Manifest:
    """The bounded load: ``hash_balance_factor`` on the route cluster's Maglev policy."""
    path = (
        "/load_balancing_policy/policies/0/typed_extension_config/typed_config/"
        "consistent_hashing_lb_config"
    )
    return {
        "apiVersion": ENVOY_API,
        "kind": "EnvoyPatchPolicy",
        "metadata": _metadata(spec),
        "spec": {
            "targetRef": {"group": GATEWAY_GROUP, "kind": "Gateway", "name": spec.name},
            "type": "JSONPatch",
            "jsonPatches": [
                {
                    "type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
                    "name": route_cluster(spec),
                    "operation": {
                        "op": "add",
                        "path": path,
                        "value": {"hash_balance_factor": HASH_BALANCE_FACTOR},
                    },
                }
            ],
        },
    }


def gateway_manifests(spec: TritonServiceSpec) -> list[Manifest]:
    """The routing objects of an ``mme`` workload, in apply order (none in ``all`` mode)."""
    if spec.front is None:
        return []
    return [
        gateway_class(spec),
        envoy_proxy(spec),
        gateway(spec),
        http_route(spec),
        backend_traffic_policy(spec),
        envoy_patch_policy(spec),
    ]
