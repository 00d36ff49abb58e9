from enum import StrEnum


class DeviceGrantType(StrEnum):
    URNIETFPARAMSOAUTHGRANT_TYPEDEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"

    def __str__(self) -> str:
        return str(self.value)
