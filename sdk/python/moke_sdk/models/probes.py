from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.probe import Probe


T = TypeVar("T", bound="Probes")


@_attrs_define
class Probes:
    """
    Attributes:
        readiness (None | Probe | Unset):
        liveness (None | Probe | Unset):
    """

    readiness: None | Probe | Unset = UNSET
    liveness: None | Probe | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.probe import Probe  # noqa: PLC0415

        readiness: dict[str, Any] | None | Unset
        if isinstance(self.readiness, Unset):
            readiness = UNSET
        elif isinstance(self.readiness, Probe):
            readiness = self.readiness.to_dict()
        else:
            readiness = self.readiness

        liveness: dict[str, Any] | None | Unset
        if isinstance(self.liveness, Unset):
            liveness = UNSET
        elif isinstance(self.liveness, Probe):
            liveness = self.liveness.to_dict()
        else:
            liveness = self.liveness

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if readiness is not UNSET:
            field_dict["readiness"] = readiness
        if liveness is not UNSET:
            field_dict["liveness"] = liveness

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.probe import Probe  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_readiness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                readiness_type_1 = Probe.from_dict(data)

                return readiness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Probe | Unset, data)

        readiness = _parse_readiness(d.pop("readiness", UNSET))

        def _parse_liveness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                liveness_type_1 = Probe.from_dict(data)

                return liveness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Probe | Unset, data)

        liveness = _parse_liveness(d.pop("liveness", UNSET))

        probes = cls(
            readiness=readiness,
            liveness=liveness,
        )

        return probes
