from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="OrgUpdate")


@_attrs_define
class OrgUpdate:
    """Changes to an organization (owners); what is absent stays as it is.

    Attributes:
        name (None | str | Unset): A new name: a DNS label, 1–63 characters, unique across Moke.
            Sign-in links that used the old name stop working; the id never changes.
        display_name (None | str | Unset): 1-100 characters without control characters.
        labels (LabelMap | None | Unset):
    """

    name: None | str | Unset = UNSET
    display_name: None | str | Unset = UNSET
    labels: LabelMap | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.label_map import LabelMap  # noqa: PLC0415

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        display_name: None | str | Unset
        if isinstance(self.display_name, Unset):
            display_name = UNSET
        else:
            display_name = self.display_name

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, LabelMap):
            labels = self.labels.to_dict()
        else:
            labels = self.labels

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_display_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        display_name = _parse_display_name(d.pop("display_name", UNSET))

        def _parse_labels(data: object) -> LabelMap | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_1 = LabelMap.from_dict(data)

                return labels_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LabelMap | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        org_update = cls(
            name=name,
            display_name=display_name,
            labels=labels,
        )

        return org_update
