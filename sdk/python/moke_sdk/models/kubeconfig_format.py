from enum import StrEnum


class KubeconfigFormat(StrEnum):
    CERTIFICATE = "certificate"
    EXEC = "exec"

    def __str__(self) -> str:
        return str(self.value)
