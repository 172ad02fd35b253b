"""How requests for a copy reach the pod that holds it in ``k8sModelMode: mme``: one declaration
of the bounded load that the stacks' Envoy, ``tdk local up --replicas``' HAProxy and the flight
simulator (``tdk plan --mme-trace``) all use (issue 46).

A consistent hash of the TargetModel with a bounded load (Mirrokni, Thorup, Zadimoghaddam,
arXiv:1608.01350): a pod already holding its share of ``factor`` x the requests in flight is
skipped for the next one. Both engines count load as requests in flight, checked 2026-12-07:

- HAProxy 2.6-3.x ``src/lb_chash.c`` ``chash_server_is_eligible``: slots = ceil((served + 1) x
  factor / 100) shared by weight; a server is eligible while it serves fewer than its slots.
- Envoy ``source/extensions/load_balancing_policies/common/thread_aware_lb_impl.cc``
  ``hostOverloadFactor``: slots = ceil((upstream_rq_active + 1) x factor / 100) x weight, rounded
  up; a host is eligible while it holds no more than its slots: one request more than HAProxy
  at the same factor, so the local proof is the stricter of the two.

Why 200 and not 150: in ``mme`` mode most requests in flight wait for a model's load (a cold
request is held for the download and the load, seconds; a warm one for milliseconds), not for
the pod's compute. A bound of 1.5x the mean then trips on ordinary fluctuation at a fleet's low
concurrency (8 clients on 4 pods: 3 requests in flight make a pod ineligible) and sends the
request to a pod that loads the model again and evicts another for it. 2x still keeps a hot copy
from piling onto one pod (HAProxy's documentation calls 125 to 200 reasonable:
https://docs.haproxy.org/2.6/configuration.html#4-hash-balance-factor). On bench/mme_k8s.py's
trace (1,000 copies, Zipf 1.0, 4 pods x 20, 8 clients) the simulator spills 354 of 2,000
requests at 150 and 109 at 200 (docs/kubernetes.md). Measured again once loads stopped holding
Triton's HTTP threads (2026-12-07, the quiet machine): hash routing reached 1.43x round robin's
hit ratio at 150 and 1.62-1.69x at 200.
"""

from __future__ import annotations

#: the bound in percent of the mean requests in flight per pod: Envoy's ``hash_balance_factor``
#: (the stacks' EnvoyPatchPolicy) and HAProxy's ``hash-balance-factor`` (``tdk local up
#: --replicas``), and the simulator's ``factor`` / 100
HASH_BALANCE_FACTOR = 200
