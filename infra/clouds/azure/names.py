"""Azure's rules for the names the aks target derives from a stack's ``name``, as
``infra.values.names.NameRule`` rows with their sources (the target's ``cloud_names`` derives
its names with them; ``infra.values.names.check_name`` checks them while the config is read).

Sources (read 2026-11-27):
- "Naming rules and restrictions for Azure resources"
  (https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules,
  MicrosoftDocs/azure-docs ``articles/azure-resource-manager/management/resource-name-rules.md``):
  resourcegroups 1-90 (alphanumerics, underscores, parentheses, hyphens, periods; not ending in
  a period); managedClusters 1-63 (alphanumerics, underscores, hyphens; starts and ends with an
  alphanumeric); userAssignedIdentities 3-128 (alphanumerics, hyphens, underscores; starts with
  a letter or number); Microsoft.Consumption budgets 1-63 (alphanumerics, hyphens, underscores);
  actionGroups 1-260 (none of ``:<>+/&%\\?``, not ending in a space or period).
- AKS node pools: "only lowercase alphanumeric characters and must begin with a lowercase
  letter; for Linux node pools, the length must be between 1-12 characters"
  (MicrosoftDocs/azure-aks-docs ``articles/aks/create-node-pools.md`` at fb060ab).
- Microsoft.ContainerRegistry registries: 5-50 alphanumerics, unique across Azure (the same
  page, read 2026-12-07): the front's registry in an ``mme`` stack without ``k8sFrontImage``.
The Azure Monitor workspace, data collection endpoint/rule and Prometheus rule group names are
not in those tables; the kit keeps them short (``{name}-...``) and does not check them here.
"""

from __future__ import annotations

from infra.values.names import NameRule

RESOURCE_GROUP = NameRule("Azure resource group name", 90, r"[-\w().]*[-\w()]")
AKS_CLUSTER = NameRule("AKS cluster name", 63, r"[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?")
AKS_LINUX_NODE_POOL = NameRule("AKS Linux node pool name", 12, r"[a-z][a-z0-9]*")
MANAGED_IDENTITY = NameRule("Azure managed identity name", 128, r"[A-Za-z0-9][A-Za-z0-9_-]{2,}")
CONSUMPTION_BUDGET = NameRule("Azure budget name", 63, r"[A-Za-z0-9_-]+")
CONTAINER_REGISTRY = NameRule("Azure container registry name", 50, r"[A-Za-z0-9]{5,50}")
ACTION_GROUP = NameRule("Azure Monitor action group name", 260, r"[^:<>+/&%\\?]*[^:<>+/&%\\?. ]")
