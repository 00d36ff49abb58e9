from enum import StrEnum


class CreditKind(StrEnum):
    PREPAID = "prepaid"
    PROMOTIONAL = "promotional"

    def __str__(self) -> str:
        return str(self.value)
