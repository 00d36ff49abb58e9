from enum import StrEnum


class AutomaticUpgradeReason(StrEnum):
    END_OF_LIFE = "end_of_life"
    RELEASE_CHANNEL = "release_channel"

    def __str__(self) -> str:
        return str(self.value)
