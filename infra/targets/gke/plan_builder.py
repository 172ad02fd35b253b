"""``tdk:gcp:PlanBuilder``: the Google service account ``tdk build``'s Job acts as, the only
identity that writes the release's engine cache (``ENGINES_PREFIX``, ``engines/``).

Triton's own identity (``ReleaseReader``) only reads the release, its engine cache included
(and the earlier ``plans/`` layout, which nothing writes), so a serving pod cannot plant an
engine for a later release to serve. Grants (Workload Identity:
cloud.google.com/kubernetes-engine/docs/how-to/workload-identity, a Kubernetes ServiceAccount
acts as a Google service account through ``roles/iam.workloadIdentityUser`` granted to
``serviceAccount:PROJECT.svc.id.goog[NAMESPACE/KSA]``; the storage roles' permissions:
cloud.google.com/iam/docs/roles-permissions/storage; both read 2026-12-07):

- ``roles/storage.objectUser`` under an IAM condition on ``<prefix>/engines/``: read, create,
  replace and delete objects there and nowhere else;
- ``roles/storage.legacyBucketReader`` (``storage.buckets.get``, ``storage.objects.list``:
  object names, never content): ``gcloud storage rsync`` lists the entry's ``input/``, and a
  listing is checked on the bucket, which no object-name condition matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from infra.clouds.gcp import identity
from infra.config import ReleaseLocation
from infra.k8s.spec import build_account_name
from infra.targets.gke import builders as b


@dataclass
class PlanBuilderArgs:
    """Whose build Job (the workload's name and namespace) writes which release's engines."""

    name: str
    project: str
    release: ReleaseLocation
    namespace: str
    #: the enabled Google APIs, waited for
    services: Sequence[pulumi.Resource] = field(default_factory=list)


class PlanBuilder(pulumi.ComponentResource):
    """A keyless Google service account usable only by the workload's build ServiceAccount,
    that may write only the release's ``engines/`` (``email``)."""

    def __init__(
        self,
        name: str,
        args: PlanBuilderArgs,
        cluster: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tdk:gcp:PlanBuilder", name, None, opts)
        release = args.release
        what = f"{args.name} plan builder (writes {release.url}/engines)"
        self.account = gcp.serviceaccount.Account(
            f"{name}-gsa",
            account_id=b.build_account_id(args.name),
            display_name=b.sa_display_name(what),
            project=args.project,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.services)),
        )
        self.email = identity.service_account_email(b.build_account_id(args.name), args.project)
        member = f"serviceAccount:{self.email}"
        after = pulumi.ResourceOptions(parent=self, depends_on=[self.account])
        gcp.storage.BucketIAMMember(
            f"{name}-plan-cache-write",
            bucket=release.bucket,
            role="roles/storage.objectUser",
            member=member,
            condition=gcp.storage.BucketIAMMemberConditionArgs(
                **b.plan_cache_condition(release.bucket, release.prefix)
            ),
            opts=after,
        )
        gcp.storage.BucketIAMMember(  # gcloud storage rsync lists the entry's input/
            f"{name}-bucket-metadata",
            bucket=release.bucket,
            role=b.BUCKET_METADATA_ROLE,
            member=member,
            opts=after,
        )
        self.binding = gcp.serviceaccount.IAMMember(
            f"{name}-wi",
            service_account_id=self.account.name,
            role=identity.WORKLOAD_IDENTITY_USER,
            member=identity.workload_identity_member(
                args.project, args.namespace, build_account_name(args.name)
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster]),
        )
        self.register_outputs({"email": self.email})
