"""The aks target: Triton on an Azure Kubernetes Service GPU node pool, scaled by KEDA."""
