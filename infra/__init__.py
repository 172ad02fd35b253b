"""Deployment targets: Pulumi programs and the local endpoint runtime."""
