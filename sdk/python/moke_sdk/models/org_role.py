from enum import StrEnum


class OrgRole(StrEnum):
    ADMIN = "admin"
    BILLING = "billing"
    MEMBER = "member"
    OWNER = "owner"
    VIEWER = "viewer"

    def __str__(self) -> str:
        return str(self.value)
