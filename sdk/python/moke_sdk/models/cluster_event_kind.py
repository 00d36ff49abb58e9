from enum import StrEnum


class ClusterEventKind(StrEnum):
    AUTOSCALED = "autoscaled"
    NODE_JOINED = "node_joined"
    NODE_LEFT = "node_left"
    NODE_NOT_READY = "node_not_ready"
    NODE_READY = "node_ready"
    OPERATION_STEP = "operation_step"
    PHASE_CHANGED = "phase_changed"

    def __str__(self) -> str:
        return str(self.value)
