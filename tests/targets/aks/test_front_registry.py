"""An aks ``mme`` stack without ``k8sFrontImage`` builds the front into an Azure Container
Registry of its own (admin user off, AcrPull for the kubelet identity only), logging in with
an ACR refresh token exchanged for the caller's Entra token: the program under mocks, the
exchange over real HTTP against a local stand-in of the registry's ``/oauth2/exchange``."""

from __future__ import annotations

import http.server
import threading
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from infra.clouds.azure.names import CONTAINER_REGISTRY
from infra.targets.aks import front_registry
from tests.clouds.azure.mocks import ENTRA_TOKEN, SUBSCRIPTION, TENANT
from tests.infra.pulumi_harness import IMAGE_DIGEST, StackRun, run_stack
from tests.infra.test_front_image import check_built_image

BUILD = {"k8sModelMode": "mme"}
REFRESH = "acr-refresh-token"
#: the real exchange (the program's runs below replace it: no registry exists under mocks)
EXCHANGE = front_registry.exchange_token


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[StackRun, list[tuple[str, ...]]]]:
    calls: list[tuple[str, ...]] = []

    def exchange(*args: str) -> str:
        calls.append(args)
        return REFRESH

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TDK_TODAY", "2026-12-07")
        patch.setattr(front_registry, "exchange_token", exchange)
        yield run_stack("aks-dev", overrides=BUILD), calls


def _unsecret(value: Any) -> Any:
    return value["value"] if isinstance(value, dict) and "value" in value else value


def test_the_registry_keeps_its_admin_user_off_and_pulls_private(built: Any) -> None:
    run, _ = built
    registry = run.one("azure-native:containerregistry:Registry").inputs
    assert registry["adminUserEnabled"] is False and registry["anonymousPullEnabled"] is False
    assert CONTAINER_REGISTRY.accepts(registry["registryName"])


def test_only_the_kubelet_identity_may_pull(built: Any) -> None:
    run, _ = built
    (pull,) = [r.inputs for r in run.of_type("azure-native:authorization:RoleAssignment")
               if r.name.endswith("-front-kubelet-pull")]  # fmt: skip
    assert pull["principalId"] == "tdk-aks-dev-aks-kubelet-object-id"
    assert pull["roleDefinitionId"].endswith("/7f951dda-4ed3-4680-a7ca-43fe172d538d")  # AcrPull
    assert pull["scope"] == "tdk-aks-dev-front-registry-id"


def test_the_image_is_pushed_with_the_exchanged_token_and_run_by_digest(built: Any) -> None:
    run, calls = built
    image = run.one("docker-build:index:Image").inputs
    server = "tdk-aks-dev-front-registry.azurecr.io"
    assert calls == [(server, TENANT, ENTRA_TOKEN)]
    (login,) = _unsecret(image["registries"])
    assert login == {
        "address": server,
        "username": "00000000-0000-0000-0000-000000000000",
        "password": REFRESH,
    }
    check_built_image(run)
    deployment = run.one("kubernetes:apps/v1:Deployment").inputs
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images[1] == f"{server}/tdk-front:latest@{IMAGE_DIGEST}" == run.outputs["frontImage"]


def test_registry_names_fit_azure_and_differ_per_subscription() -> None:
    for name in ("tdk-aks-dev", "a", "x" * 40, "1-2-3"):
        assert CONTAINER_REGISTRY.accepts(front_registry.registry_name(name, SUBSCRIPTION)), name
    one = front_registry.registry_name("tdk-aks-dev", SUBSCRIPTION)
    assert one == front_registry.registry_name("tdk-aks-dev", SUBSCRIPTION)
    assert one != front_registry.registry_name("tdk-aks-dev", "other-subscription")
    assert not CONTAINER_REGISTRY.accepts("tdk-aks") and not CONTAINER_REGISTRY.accepts("abcd")


def test_the_exchange_posts_the_entra_token_and_returns_the_refresh_token() -> None:
    seen: dict[str, list[str]] = {}

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            seen.update(urllib.parse.parse_qs(self.rfile.read(length).decode()))
            seen["path"] = [self.path]
            body = b'{"refresh_token": "r-1"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        token = EXCHANGE("r.azurecr.io", TENANT, "entra", base=base)
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    assert token == "r-1"
    assert seen == {
        "grant_type": ["access_token"], "service": ["r.azurecr.io"], "tenant": [TENANT],
        "access_token": ["entra"], "path": ["/oauth2/exchange"],
    }  # fmt: skip
