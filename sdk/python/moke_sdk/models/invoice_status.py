from enum import StrEnum


class InvoiceStatus(StrEnum):
    DRAFT = "draft"
    FINALIZED = "finalized"
    VOID = "void"

    def __str__(self) -> str:
        return str(self.value)
