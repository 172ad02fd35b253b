"""A Triton Python-backend model that computes for ``delay_ms`` per request, on one instance.

With one instance and several clients, requests wait in Triton's queue while another computes:
the queue/compute ratio the KEDA trigger reads rises with the number of waiting clients. A
negative input makes the request fail, so the error-ratio alert can be driven too: it raises,
because Triton counts an error *response* from the Python backend as a successful request.
"""

import json
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        parameters = json.loads(args["model_config"])["parameters"]
        self.delay = float(parameters["delay_ms"]["string_value"]) / 1000

    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "x").as_numpy()
            time.sleep(self.delay)
            if (x < 0).any():
                raise pb_utils.TritonModelException("negative input refused")
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("y", x)]))
        return responses
