"""Windows: mergeable sketches on reference bins, panes, and reference profiles."""

__all__: list[str] = []
