"""Several ``driftwatch run`` instances in one Kafka consumer group (README, "Scaling out").

Each instance sketches the partitions the group assigns it; pane sketches travel over
the pane log topic; the owner of each model's leader partition merges complete panes
and alone decides and acts.
"""

from driftwatch.service.group.runtime import GroupRuntime

__all__ = ["GroupRuntime"]
