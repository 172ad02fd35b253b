"""The values a cloud fills and the targets' contract reads, below both (so no import runs from
``infra/clouds`` up into ``infra/targets``): what a serving unit offers a model (``offer``), the
rules a derived name keeps (``names``), a stack's budget and network guardrails
(``guardrails``)."""
