"""Decoupled (LLM) model copies on inference components: Triton's SageMaker generate modes.

What Triton's SageMaker front does (triton-inference-server/server ``src/sagemaker_server.cc``,
``src/sagemaker_server.h`` and ``docker/sagemaker/serve`` at e1db8a60, checked 2026-11-26):

- ``SAGEMAKER_TRITON_INFERENCE_TYPE`` (``infer`` by default, or ``generate`` /
  ``generate_stream``) decides what ``POST /invocations`` does for the one model a
  single-model container serves (``SAGEMAKER_TRITON_DEFAULT_MODEL_NAME``): ``infer`` refuses a
  decoupled model ("HTTP end point doesn't support models with decoupled transaction policy");
  ``generate_stream`` answers the generate extension's server-sent events. The mode is read
  once at start, so one container serves one of them; it came with commit 96e7cb5b (#8047,
  2025-03-04), first in v2.56.0, the 25.03 image.
- Multi-model (MME) mode has no generate route: decoupled models are for single-model
  containers only, i.e. one inference component per copy, as this target declares.
- The single-model serve script wants ``/opt/ml/model/<model>/config.pbtxt``. A decoupled copy
  has no ``mme/`` archive, so its component's model data is the release's ``repository/``
  prefix, uncompressed (S3ModelDataSource ``S3Prefix``/``None``: every object under the prefix
  lands under /opt/ml/model by its key's remainder;
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_S3ModelDataSource.html, checked
  2026-11-26). Each such component downloads the whole repository; only its copy is loaded.

``generate_stream`` is chosen (not ``generate``): it serves InvokeEndpointWithResponseStream,
so tokens arrive as produced, and a caller that wants one answer joins the events.
"""

from __future__ import annotations

from typing import Any

from infra.facts.llm import release_key
from tdk.errors import ConfigError

INFERENCE_TYPE_ENV = "SAGEMAKER_TRITON_INFERENCE_TYPE"
GENERATE_MODE = "generate_stream"
#: the first SageMaker Triton image whose front serves the generate modes (Triton 2.56.0)
FIRST_GENERATE_RELEASE = "25.03"
SOURCE = (
    "https://github.com/triton-inference-server/server/blob/"
    "e1db8a603d863b1317ee859bdeea2be19959462e/src/sagemaker_server.cc"
)
REPOSITORY_PREFIX = "repository/"


def check_generate_image(where: str, copy: str, triton_version: str) -> None:
    """Refuse a decoupled copy on an image whose SageMaker front cannot serve it."""
    if release_key(triton_version) >= release_key(FIRST_GENERATE_RELEASE):
        return
    raise ConfigError(
        f"{where}: {copy} is decoupled (an LLM / streaming model) and the SageMaker Triton "
        f"{triton_version} image cannot serve it: its /invocations only infers, which Triton "
        "refuses for decoupled models; SAGEMAKER_TRITON_INFERENCE_TYPE=generate_stream came "
        f"with Triton 2.56 ({FIRST_GENERATE_RELEASE}; {SOURCE}, checked 2026-11-26)",
        hint=f"set sagemakerTritonVersion to {FIRST_GENERATE_RELEASE} or newer, or serve the "
        "model on gke/eks",
    )


def generate_container(image: str, release_url: str, env: dict[str, str]) -> dict[str, Any]:
    """The primary container of a decoupled copy's model (``env`` names it): the release's
    repository/ prefix, uncompressed, served in generate_stream mode."""
    source: dict[str, Any] = {
        "s3_uri": f"{release_url.rstrip('/')}/{REPOSITORY_PREFIX}",
        "s3_data_type": "S3Prefix",
        "compression_type": "None",
    }
    return {
        "image": image,
        "mode": "SingleModel",
        "model_data_source": {"s3_data_sources": [source]},
        "environment": {**env, INFERENCE_TYPE_ENV: GENERATE_MODE},
    }
