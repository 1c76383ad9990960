"""Onboarding a model: infer a connector and a policy from its data, check they agree."""
