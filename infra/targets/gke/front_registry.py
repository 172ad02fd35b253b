"""``tdk:gcp:FrontRegistry``: an ``mme`` stack without ``k8sFrontImage`` builds the front's image
into an Artifact Registry repository of its own, which only the GKE nodes' service account may
read (kubelet pulls images as the node, not as the pod's Workload Identity)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from infra.clouds.gcp import identity
from infra.k8s.front_image import IMAGE_NAME, FrontImage, RegistryLogin
from infra.targets.gke import builders as b

#: the API the repository needs, enabled with the others only when the stack builds the image
ARTIFACT_REGISTRY_SERVICE = "artifactregistry.googleapis.com"
#: Artifact Registry takes an OAuth 2.0 access token as the password of this user
#: (https://cloud.google.com/artifact-registry/docs/docker/authentication, "Access token",
#: 2026-12-07): the caller's token from the provider, short-lived, never stored in a key file
ACCESS_TOKEN_USER = "oauth2accesstoken"
READER_ROLE = "roles/artifactregistry.reader"


def repository_id(name: str) -> str:
    """The repository's id (checked with the stack's other names: ``cloud_names``)."""
    return f"{name}-front"


def registry_host(region: str) -> str:
    """The Docker host of the region's Artifact Registry."""
    return f"{region}-docker.pkg.dev"


def image_repository(region: str, project: str, name: str) -> str:
    """Where the image is pushed: ``<region>-docker.pkg.dev/<project>/<repository>/tdk-front``."""
    return f"{registry_host(region)}/{project}/{repository_id(name)}/{IMAGE_NAME}"


class FrontRegistry(pulumi.ComponentResource):
    """The repository, the nodes' read grant on it, and the built image (``ref``)."""

    def __init__(
        self,
        name: str,
        *,
        stack_name: str,
        project: str,
        region: str,
        services: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:gcp:FrontRegistry", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(services))
        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository",
            repository_id=repository_id(stack_name),
            format="DOCKER",
            location=region,
            project=project,
            description=f"{stack_name}: the kit's front (docker/front.Dockerfile)",
            opts=child,
        )
        nodes = identity.service_account_email(b.node_account_id(stack_name), project)
        self.pull = gcp.artifactregistry.RepositoryIamMember(
            f"{name}-nodes-pull",
            repository=self.repository.name,
            location=region,
            project=project,
            role=READER_ROLE,
            member=f"serviceAccount:{nodes}",
            opts=pulumi.ResourceOptions(parent=self),
        )
        token = gcp.organizations.get_client_config_output().access_token
        self.image = FrontImage(
            f"{name}-image",
            self.repository.name.apply(lambda _: image_repository(region, project, stack_name)),
            RegistryLogin(registry_host(region), ACCESS_TOKEN_USER, token),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.repository]),
        )
        self.ref = self.image.ref
        self.register_outputs({"ref": self.ref})
