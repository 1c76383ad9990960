"""Onboarding a model: infer a connector and a policy from its data (``driftwatch init``)
and check that the reference, the connector and the policy agree."""

__all__: list[str] = []
