from enum import StrEnum


class VersionSupport(StrEnum):
    DEPRECATED = "deprecated"
    END_OF_LIFE = "end_of_life"
    SUPPORTED = "supported"

    def __str__(self) -> str:
        return str(self.value)
