from enum import StrEnum


class OperationStatus(StrEnum):
    AWAITING_APPROVAL = "awaiting_approval"
    FAILED = "failed"
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
