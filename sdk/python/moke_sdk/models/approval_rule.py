from enum import StrEnum


class ApprovalRule(StrEnum):
    CLUSTER_DELETE = "cluster_delete"
    CONTROL_PLANE_REDUCTION = "control_plane_reduction"
    NODE_POOL_DELETE = "node_pool_delete"
    NODE_POOL_SCALE_DOWN = "node_pool_scale_down"
    SNAPSHOT_RESTORE = "snapshot_restore"
    UPGRADE_OUTSIDE_WINDOW = "upgrade_outside_window"

    def __str__(self) -> str:
        return str(self.value)
