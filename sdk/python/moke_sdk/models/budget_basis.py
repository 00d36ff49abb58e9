from enum import StrEnum


class BudgetBasis(StrEnum):
    FORECAST = "forecast"
    SPEND = "spend"

    def __str__(self) -> str:
        return str(self.value)
