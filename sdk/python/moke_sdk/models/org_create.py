from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="OrgCreate")


@_attrs_define
class OrgCreate:
    """A new organization. The person asking becomes its only owner; a person
    owns at most 10.

        Attributes:
            name (str): DNS label: lowercase letters, digits and `-`, 1–63 characters, unique
                across Moke (a deleted organization's name stays taken).
            display_name (None | str | Unset): 1-100 characters without control characters (surrounding whitespace
                is ignored); the name when omitted.
            labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
                characters.
    """

    name: str
    display_name: None | str | Unset = UNSET
    labels: LabelMap | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        display_name: None | str | Unset
        if isinstance(self.display_name, Unset):
            display_name = UNSET
        else:
            display_name = self.display_name

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_display_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        display_name = _parse_display_name(d.pop("display_name", UNSET))

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        org_create = cls(
            name=name,
            display_name=display_name,
            labels=labels,
        )

        return org_create
