"""``tdk:gcp:EngineBuilder``: the Google service account ``tdk build``'s Job acts as, the only
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

Before 2026-12-07 (issue 50 item 3) the component was ``tdk:gcp:PlanBuilder`` named
``<name>-plans``, its children named after that. Pulumi names a resource by its URN (type,
name and parent path), so each renamed resource carries an alias to its former type and name:
a stack deployed before keeps its live resources instead of deleting and recreating them
(pulumi.com/docs/iac/concepts/resources/options/aliases, read 2026-12-07: the engine combines a
parent's aliases with each child's own).
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

#: the component's type token before 2026-12-07, kept as an alias
FORMER_TYPE = "tdk:gcp:PlanBuilder"


def former_name(name: str) -> str:
    """The component's logical name before 2026-12-07 for the workload ``name``."""
    return f"{name}-plans"


def _was(name: str) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(aliases=[pulumi.Alias(name=name)])


@dataclass
class EngineBuilderArgs:
    """Whose build Job (the workload's name and namespace) writes which release's engines."""

    name: str
    project: str
    release: ReleaseLocation
    namespace: str
    #: the enabled Google APIs, waited for
    services: Sequence[pulumi.Resource] = field(default_factory=list)


class EngineBuilder(pulumi.ComponentResource):
    """A keyless Google service account usable only by the workload's build ServiceAccount,
    that may write only the release's ``engines/`` (``email``). The stack names it
    ``<name>-engines``."""

    def __init__(
        self,
        name: str,
        args: EngineBuilderArgs,
        cluster: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        former = former_name(args.name)
        was = pulumi.Alias(type_=FORMER_TYPE, name=former)
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[was]))
        super().__init__("tdk:gcp:EngineBuilder", name, None, opts)
        release = args.release
        # the display name keeps its wording: a change updates the live account for no gain
        what = f"{args.name} plan builder (writes {release.url}/engines)"
        self.account = gcp.serviceaccount.Account(
            f"{name}-gsa",
            account_id=b.build_account_id(args.name),
            display_name=b.sa_display_name(what),
            project=args.project,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.services)).merge(
                _was(f"{former}-gsa")
            ),
        )
        self.email = identity.service_account_email(b.build_account_id(args.name), args.project)
        member = f"serviceAccount:{self.email}"
        after = pulumi.ResourceOptions(parent=self, depends_on=[self.account])
        gcp.storage.BucketIAMMember(
            f"{name}-engine-cache-write",
            bucket=release.bucket,
            role="roles/storage.objectUser",
            member=member,
            condition=gcp.storage.BucketIAMMemberConditionArgs(
                **b.engine_cache_condition(release.bucket, release.prefix)
            ),
            opts=after.merge(_was(f"{former}-plan-cache-write")),
        )
        gcp.storage.BucketIAMMember(  # gcloud storage rsync lists the entry's input/
            f"{name}-bucket-metadata",
            bucket=release.bucket,
            role=b.BUCKET_METADATA_ROLE,
            member=member,
            opts=after.merge(_was(f"{former}-bucket-metadata")),
        )
        self.binding = gcp.serviceaccount.IAMMember(
            f"{name}-wi",
            service_account_id=self.account.name,
            role=identity.WORKLOAD_IDENTITY_USER,
            member=identity.workload_identity_member(
                args.project, args.namespace, build_account_name(args.name)
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[cluster]).merge(
                _was(f"{former}-wi")
            ),
        )
        self.register_outputs({"email": self.email})
