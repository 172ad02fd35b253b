"""Google Cloud: the GKE GPU cluster, its identities and its Cloud Monitoring resources."""
