"""Google Cloud's rules for the names the gke target derives from a stack's ``name`` (RFC 1035
labels for GKE and Compute Engine resources; service account ids), as
``infra.values.names.NameRule`` rows."""

from __future__ import annotations

from infra.values.names import NameRule

_RFC1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
GKE_CLUSTER = NameRule("GKE cluster name", 40, _RFC1035)
GKE_NODE_POOL = NameRule("GKE node pool name", 40, _RFC1035)
GCE = NameRule("Compute Engine resource name", 63, _RFC1035)
GCP_SERVICE_ACCOUNT = NameRule("GCP service account id", 30, r"[a-z][-a-z0-9]{4,28}[a-z0-9]")
#: the gke stack's front image repository (k8sModelMode mme, k8sFrontImage empty): "lowercase
#: letters, numbers, and hyphens; starts with a letter, ends with a letter or number", at most
#: 63 characters (Artifact Registry, "Create standard repositories",
#: https://cloud.google.com/artifact-registry/docs/repositories/create-repos, 2026-12-07)
ARTIFACT_REGISTRY_REPOSITORY = NameRule("Artifact Registry repository id", 63, _RFC1035)
