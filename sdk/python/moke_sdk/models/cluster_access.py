from enum import StrEnum


class ClusterAccess(StrEnum):
    ADMIN = "admin"
    EDIT = "edit"
    VIEW = "view"

    def __str__(self) -> str:
        return str(self.value)
