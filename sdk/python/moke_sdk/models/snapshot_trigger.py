from enum import StrEnum


class SnapshotTrigger(StrEnum):
    ON_DEMAND = "on_demand"
    SCHEDULED = "scheduled"

    def __str__(self) -> str:
        return str(self.value)
