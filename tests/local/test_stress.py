"""32 concurrent boto3 clients across 5 models with K = 2: every request answered 200.

Every client starts on a different model (``worker % 5``), so all five are wanted at once from
the first request and K = 2 forces at least three unloads whatever ``TDK_STRESS_REQUESTS`` is;
the default (30 per client, 960 in all, each client moving on every 10, so it asks for three
models in turn) keeps `make test` short. Raise it (e.g. 500) for a longer soak."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from infra.clients.inputs import example_inputs
from infra.clouds.aws.sagemaker.runtime import SageMakerRuntimeTarget
from tests.local.local_helpers import Endpoint

pytestmark = pytest.mark.e2e

CLIENTS = 32
CAPACITY_TIMEOUT_S = 120  # how long the endpoint holds a request waiting for a model slot
REQUESTS = int(os.environ.get("TDK_STRESS_REQUESTS", "30"))
MOVE_EVERY = 10  # requests before a client moves on to the next model
MODELS = (
    "tokenizer-0.tar.gz",
    "tokenizer-1.tar.gz",
    "tokenizer-2.tar.gz",
    "text_classifier-0.tar.gz",
    "text_classifier-1.tar.gz",
)


@pytest.fixture(scope="module")
def endpoint(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    from tests.local.local_helpers import start_endpoint

    running = start_endpoint(
        release,
        tmp_path_factory.mktemp("state"),
        "--max-loaded-models",
        "2",
        "--capacity-timeout",
        str(CAPACITY_TIMEOUT_S),
    )
    try:
        yield running
    finally:
        running.stop()


def test_32_clients_5_models_k2_all_answered(endpoint: Endpoint) -> None:
    client = endpoint.client(read_timeout=CAPACITY_TIMEOUT_S + 60)  # outwait the endpoint
    target = SageMakerRuntimeTarget("local", endpoint_url=endpoint.url, local=True)
    models = [endpoint.manifest.by_target_model(name) for name in MODELS]
    requests = [target.prepare(model, example_inputs(model)) for model in models]

    errors: dict[str, str] = {}  # the first message of each error code, for the report

    def run(worker: int) -> Counter[str]:
        counts: Counter[str] = Counter()
        for i in range(REQUESTS):
            index = (worker + i // MOVE_EVERY) % len(models)
            try:
                response = client.invoke_endpoint(
                    EndpointName="local",
                    TargetModel=models[index].target_model,
                    Body=requests[index].body,
                    ContentType=requests[index].content_type,
                )
                response["Body"].read()
                counts[str(response["ResponseMetadata"]["HTTPStatusCode"])] += 1
            except ClientError as exc:
                code = exc.response["Error"]["Code"]
                counts[code] += 1
                errors.setdefault(code, str(exc.response["Error"].get("Message")))
        return counts

    started = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        totals = sum(pool.map(run, range(CLIENTS)), Counter())
    elapsed = time.monotonic() - started
    status = endpoint.status()
    unloads = status["metrics"]["ModelUnloads"]
    print(f"\n{CLIENTS}x{REQUESTS} requests in {elapsed:.1f} s; {unloads} unloads")
    assert totals == Counter({"200": CLIENTS * REQUESTS}), endpoint_report(endpoint, status, errors)
    assert status["metrics"]["LoadedModelCount"] <= 2
    assert status["metrics"]["ModelUnloads"] >= 3
    target.close()


def endpoint_report(endpoint: Endpoint, status: dict[str, object], errors: dict[str, str]) -> str:
    """What a failed run needs to be diagnosed: each error's first message, the endpoint's
    status, its log and its Triton's log (their last lines)."""
    logs = [endpoint.log, *endpoint.state_dir.glob("local-*/triton.log")]
    tails = [
        f"--- {path}:\n" + "\n".join(path.read_text(errors="replace").splitlines()[-60:])
        for path in logs
        if path.exists()
    ]
    return "\n".join([f"errors: {errors}", f"status: {status}", *tails])
