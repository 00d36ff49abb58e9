from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.spec_change import SpecChange


T = TypeVar("T", bound="SpecDiff")


@_attrs_define
class SpecDiff:
    """What differs between two revisions of a spec.

    Attributes:
        from_ (int): The older generation compared.
        to (int): The newer generation compared.
        changes (list[SpecChange]): Every value that differs, ordered by path; empty when the specs are equal.
    """

    from_: int
    to: int
    changes: list[SpecChange]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_

        to = self.to

        changes = []
        for changes_item_data in self.changes:
            changes_item = changes_item_data.to_dict()
            changes.append(changes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "from": from_,
                "to": to,
                "changes": changes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.spec_change import SpecChange  # noqa: PLC0415

        d = dict(src_dict)
        from_ = d.pop("from")

        to = d.pop("to")

        changes = []
        _changes = d.pop("changes")
        for changes_item_data in _changes:
            changes_item = SpecChange.from_dict(changes_item_data)

            changes.append(changes_item)

        spec_diff = cls(
            from_=from_,
            to=to,
            changes=changes,
        )

        spec_diff.additional_properties = d
        return spec_diff

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
