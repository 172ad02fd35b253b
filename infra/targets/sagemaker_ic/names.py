"""The sagemaker-ic target's name, written once: its entry, deploy contract, client, builders
and cloud-name rules read it here (the pure builders cannot import the entry)."""

from __future__ import annotations

#: the value of ``triton-deploy-kit:target`` (and ``--target``) that selects this target
TARGET_NAME = "sagemaker-ic"
