"""Amazon Web Services, shared by the targets that deploy there (sagemaker, sagemaker-ic, eks):
the machine checks (``machine``), the budget and log guardrails (``guardrails``)."""
