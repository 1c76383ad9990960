"""Test helpers shipped with the package: a seeded synthetic credit stream and its scenarios."""

__all__: list[str] = []
