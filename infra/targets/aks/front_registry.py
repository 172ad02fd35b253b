"""``tdk:azure:FrontRegistry``: an ``mme`` stack without ``k8sFrontImage`` builds the front's image
into an Azure Container Registry of its own: admin user off, no anonymous pull, and AcrPull for
the cluster's kubelet identity only (kubelet pulls images as the node, not as the pod).

Pushing without the admin user's keys: the caller's Entra access token (the provider's
``getClientToken``) is exchanged at the registry's ``/oauth2/exchange`` for an ACR refresh
token, the password ``docker login`` takes with the null-GUID user; what ``az acr login`` does
(Azure/acr ``docs/AAD-OAuth.md``, "Authenticating to a registry with Azure CLI", read
2026-12-07). The token lives only in memory and in the secret the image resource is given.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
import urllib.request

import pulumi
import pulumi_azure_native as azure

from infra.clouds.azure.identity import ACR_PULL, role_definition
from infra.clouds.azure.names import CONTAINER_REGISTRY
from infra.clouds.azure.workload_identity import Grant, role_assignment
from infra.k8s.front_image import IMAGE_NAME, FrontImage, RegistryLogin

#: ``docker login``'s user for an ACR refresh token (AAD-OAuth.md)
NULL_USER = "00000000-0000-0000-0000-000000000000"
EXCHANGE_TIMEOUT_S = 30
_HASH = 8


def registry_name(name: str, subscription: str) -> str:
    """The registry's name: the stack name's alphanumerics and a hash of (subscription, name),
    since registry names are global across Azure; 5-50 alphanumerics (``CONTAINER_REGISTRY``)."""
    stem = re.sub(r"[^A-Za-z0-9]", "", name)[: CONTAINER_REGISTRY.limit - _HASH]
    digest = hashlib.sha256(f"{subscription}/{name}".encode()).hexdigest()[:_HASH]
    return f"{stem}{digest}".lower()


def exchange_token(
    login_server: str, tenant: str, access_token: str, base: str | None = None
) -> str:
    """The ACR refresh token for ``access_token`` (Entra) from ``login_server``'s exchange
    (``base``: the registry's URL when it is not ``https://<login_server>``)."""
    body = urllib.parse.urlencode(
        {
            "grant_type": "access_token",
            "service": login_server,
            "tenant": tenant,
            "access_token": access_token,
        }
    ).encode()
    request = urllib.request.Request(
        f"{f'https://{login_server}' if base is None else base}/oauth2/exchange",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with urllib.request.urlopen(request, timeout=EXCHANGE_TIMEOUT_S) as response:
        token: str = json.load(response)["refresh_token"]
    return token


class FrontRegistry(pulumi.ComponentResource):
    """The registry, the kubelet identity's AcrPull on it, and the built image (``ref``)."""

    def __init__(
        self,
        name: str,
        *,
        stack_name: str,
        location: str,
        resource_group: pulumi.Input[str],
        subscription: pulumi.Output[str],
        tenant: pulumi.Output[str],
        kubelet_object_id: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:azure:FrontRegistry", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.registry = azure.containerregistry.Registry(
            f"{name}-registry",
            registry_name=subscription.apply(lambda s: registry_name(stack_name, s)),
            resource_group_name=resource_group,
            location=location,
            sku={"name": "Basic"},
            admin_user_enabled=False,
            anonymous_pull_enabled=False,
            opts=child,
        )
        acr_pull = Grant(
            subscription.apply(lambda s: role_definition(s, ACR_PULL)), self.registry.id
        )
        self.pull = role_assignment(f"{name}-kubelet-pull", kubelet_object_id, acr_pull, child)
        access = azure.authorization.get_client_token_output().token
        server = self.registry.login_server
        password = pulumi.Output.all(server, tenant, access).apply(
            lambda args: exchange_token(args[0], args[1], args[2])
        )
        self.image = FrontImage(
            f"{name}-image",
            pulumi.Output.concat(server, f"/{IMAGE_NAME}"),
            RegistryLogin(server, NULL_USER, pulumi.Output.secret(password)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.registry]),
        )
        self.ref = self.image.ref
        self.register_outputs({"ref": self.ref})
