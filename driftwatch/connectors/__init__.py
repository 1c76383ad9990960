"""Connectors: where events come from (files, Kafka) and how a message maps to fields."""

__all__: list[str] = []
