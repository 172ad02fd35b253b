"""``infra.planning.routing``: Envoy's and HAProxy's bounded loads as their sources compute them,
and HAProxy's factor that is never looser than the stacks' Envoy (issue 46: the local proof is
routed as the cloud's Envoy is, or more strictly)."""

from __future__ import annotations

import pytest

from infra.perf.plan import mme_trace as sim
from infra.planning import routing
from tdk.errors import UsageError


def test_the_worked_example_of_both_engines() -> None:
    """8 requests in flight over 4 pods at 150: both engines count ceil(9 x 1.5) = 14 slots.
    Envoy gives each host ceil(14 / 4) = 4 and takes a request while a host holds at most 4
    (so up to 5); HAProxy shares the 14 out as 3, 4, 3, 4 and takes one while a server holds
    fewer than its share."""
    assert routing.envoy_most(8, 4, 150) == 5
    assert [routing.haproxy_most(8, 4, 150, i) for i in range(4)] == [3, 4, 3, 4]
    assert routing.envoy_most(0, 4, 150) == 2  # an idle fleet: one slot each, at least
    assert [routing.haproxy_most(0, 4, 150, i) for i in range(4)] == [1, 1, 1, 1]


@pytest.mark.parametrize("factor", [100, 125, 150, 200, 300])
def test_haproxy_is_never_looser_than_envoy_at_the_same_factor(factor: int) -> None:
    for pods in range(1, 9):
        for in_flight in range(0, 6 * pods):
            envoy = routing.envoy_most(in_flight, pods, factor)
            shares = [routing.haproxy_most(in_flight, pods, factor, i) for i in range(pods)]
            assert max(shares) <= envoy - 1  # at most Envoy's slots: one request fewer
            total = ((in_flight + 1) * factor + 99) // 100
            if total >= pods:  # HAProxy shares out exactly its total
                assert sum(shares) == total


def test_haproxys_factor_is_the_largest_never_looser_than_the_stacks_envoy() -> None:
    """The constants are derived, not chosen: a change to either rule fails here."""
    assert routing.HASH_BALANCE_FACTOR == 150  # issue 46's bound, on the stacks' Envoy
    for pods in range(1, 9):  # up to 2 requests a pod in flight, one more pod joining
        found = routing.haproxy_equivalent(routing.HASH_BALANCE_FACTOR, (pods, pods + 1), 2 * pods)
        assert found == routing.HAPROXY_HASH_BALANCE_FACTOR
    looser = routing.HAPROXY_HASH_BALANCE_FACTOR + 1
    assert any(
        routing.haproxy_most(a, 4, looser, i) > routing.envoy_most(a, 4, 150)
        for a in range(8)
        for i in range(4)
    )
    # at up to 4 requests a pod it would take a stricter HAProxy (docs/kubernetes.md says so)
    assert routing.haproxy_equivalent(150, (4, 5), 16) == 175


def test_the_simulator_bounds_as_the_engine_it_is_told() -> None:
    """One hot model, 8 clients, 4 pods: Envoy at 150 lets its pod hold more before it
    spills than HAProxy at 150 does; an unknown engine is refused."""
    trace = ["hot", "a", "b", "c"] * 40
    envoy = sim.simulate(trace, 4, 5, "hash", 8, 1.5)
    haproxy = sim.simulate(trace, 4, 5, "hash", 8, 1.5, engine="haproxy")
    assert envoy.spilled < haproxy.spilled
    with pytest.raises(UsageError, match="engine 'nginx'"):
        sim.simulate(trace, 4, 5, "hash", 8, engine="nginx")
