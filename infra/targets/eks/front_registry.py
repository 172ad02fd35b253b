"""``tdk:aws:FrontRegistry``: an ``mme`` stack without ``k8sFrontImage`` builds the front's image
into an ECR repository of its own: private, scanned on push, encrypted, and readable by the EKS
nodes' role (kubelet pulls images as the node) through the repository's policy."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from infra.k8s.front_image import FrontImage, RegistryLogin
from infra.targets.eks.cloud_names import front_repository

#: what pulling an image takes (ECR's "Private repository policy examples", pull by a role;
#: https://docs.aws.amazon.com/AmazonECR/latest/userguide/repository-policy-examples.html,
#: 2026-12-07): nothing that writes or deletes
PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetDownloadUrlForLayer",
)


def pull_policy(node_role_arn: str) -> str:
    """The repository policy: the nodes' role may pull, nobody else gains anything."""
    statement = {
        "Sid": "EksNodesPull",
        "Effect": "Allow",
        "Principal": {"AWS": node_role_arn},
        "Action": list(PULL_ACTIONS),
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


class FrontRegistry(pulumi.ComponentResource):
    """The repository, its pull policy for the nodes, and the built image (``ref``)."""

    def __init__(
        self,
        name: str,
        *,
        stack_name: str,
        node_role_arn: pulumi.Input[str],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:aws:FrontRegistry", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.repository = aws.ecr.Repository(
            f"{name}-repository",
            name=front_repository(stack_name),
            image_tag_mutability="MUTABLE",  # the tag moves; pods run the digest
            image_scanning_configuration={"scan_on_push": True},
            encryption_configurations=[{"encryption_type": "AES256"}],
            opts=child,
        )
        self.pull = aws.ecr.RepositoryPolicy(
            f"{name}-nodes-pull",
            repository=self.repository.name,
            policy=pulumi.Output.from_input(node_role_arn).apply(pull_policy),
            opts=child,
        )
        token = aws.ecr.get_authorization_token_output(registry_id=self.repository.registry_id)
        login = RegistryLogin(
            address=self.repository.repository_url.apply(lambda url: url.split("/", 1)[0]),
            username=token.user_name,
            password=token.password,
        )
        self.image = FrontImage(
            f"{name}-image",
            self.repository.repository_url,
            login,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.repository]),
        )
        self.ref = self.image.ref
        self.register_outputs({"ref": self.ref})
