from enum import StrEnum


class ReleaseChannel(StrEnum):
    NONE = "none"
    RAPID = "rapid"
    REGULAR = "regular"
    STABLE = "stable"

    def __str__(self) -> str:
        return str(self.value)
