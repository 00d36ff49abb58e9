from enum import StrEnum


class ApproverRole(StrEnum):
    ADMIN = "admin"
    OWNER = "owner"

    def __str__(self) -> str:
        return str(self.value)
