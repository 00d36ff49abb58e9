from enum import StrEnum


class QuotaSource(StrEnum):
    OVERRIDE = "override"
    PLAN = "plan"

    def __str__(self) -> str:
        return str(self.value)
