"""infra/facts/llm.py: the LLM image facts are dated, sourced and consistent."""

from __future__ import annotations

from infra.clouds.aws import catalog as aws_catalog
from infra.clouds.gcp import catalog as gcp_catalog
from infra.facts import llm


def test_sources_are_dated_and_linked() -> None:
    for source in (llm.COMPATIBILITY, llm.VLLM_BACKEND, llm.RELEASE_24_12, gcp_catalog.GCE_G2):
        assert source.url.startswith("https://") and source.checked == llm.LLM_CHECKED


def test_every_engine_has_a_flavour_and_a_first_release() -> None:
    assert set(llm.FLAVOURS) == set(llm.FIRST_RELEASE)
    for release in [*llm.TRTLLM_VERSIONS, *llm.VLLM_VERSIONS]:
        assert llm.release_key(release) >= llm.release_key(llm.FIRST_RELEASE["tensorrt_llm"])


def test_engine_image_keeps_the_release() -> None:
    base = "nvcr.io/nvidia/tritonserver:25.09-py3"
    assert llm.engine_image(base, "vllm") == "nvcr.io/nvidia/tritonserver:25.09-vllm-python-py3"
    assert llm.release_of(llm.engine_image(base, "tensorrt_llm")) == "25.09"
    assert llm.release_of("registry.example/custom:latest") == ""


def test_multi_gpu_shapes_the_issue_names() -> None:
    assert gcp_catalog.G2_MACHINE_GPUS["g2-standard-48"] == 4
    g6e = aws_catalog.EC2_GPU_FAMILIES["g6e"]
    assert (g6e.gpu, g6e.gpus["12xlarge"]) == ("L40S", 4)


def test_flavour_backends() -> None:
    assert llm.flavour_backends("nvcr.io/nvidia/tritonserver:25.09-vllm-python-py3") == {"vllm"}
    assert llm.flavour_backends("25.09-trtllm-python-py3") == {"tensorrtllm"}
    assert llm.flavour_backends("nvcr.io/nvidia/tritonserver:25.09-py3") == frozenset()
    assert set(llm.FLAVOURS.values()) == set(llm.FLAVOUR_BACKENDS)
