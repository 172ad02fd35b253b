"""InvokeEndpoint addressed to an inference component (``InferenceComponentName``)."""

from __future__ import annotations

from infra.clouds.aws.sagemaker.components import component_name
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from packager.manifest import ManifestModel


class InferenceComponentTarget(SageMakerRuntimeTarget):
    """An endpoint whose models are inference components: each model copy is served by the
    component named after it (``names.component_name``). The local endpoint answers the same
    header, so ``endpoint_url``/``local`` work as for the MME client."""

    def address(self, model: ManifestModel) -> dict[str, str]:
        return {"InferenceComponentName": component_name(model.name)}
