from enum import StrEnum


class ApprovalState(StrEnum):
    APPROVED = "approved"
    AWAITING = "awaiting"
    EXPIRED = "expired"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"

    def __str__(self) -> str:
        return str(self.value)
