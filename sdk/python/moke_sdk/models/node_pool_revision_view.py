from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.node_pool_spec import NodePoolSpec


T = TypeVar("T", bound="NodePoolRevisionView")


@_attrs_define
class NodePoolRevisionView:
    """One generation of a node pool's desired spec, as it was; immutable.

    Attributes:
        generation (int): The pool's generation while this was its spec.
        spec (NodePoolSpec):
        created_at (datetime.datetime):
        cause (None | str | Unset): What made it: the Operation's kind, e.g. `node_pool_create`,
            `node_pool_update`, `node_pool_recycle`; none for a revision older
            than revision history.
        operation_id (None | str | Unset):
        created_by (None | str | Unset): Who made it (a principal id), or `system`.
    """

    generation: int
    spec: NodePoolSpec
    created_at: datetime.datetime
    cause: None | str | Unset = UNSET
    operation_id: None | str | Unset = UNSET
    created_by: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        spec = self.spec.to_dict()

        created_at = self.created_at.isoformat()

        cause: None | str | Unset
        if isinstance(self.cause, Unset):
            cause = UNSET
        else:
            cause = self.cause

        operation_id: None | str | Unset
        if isinstance(self.operation_id, Unset):
            operation_id = UNSET
        else:
            operation_id = self.operation_id

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        else:
            created_by = self.created_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "generation": generation,
                "spec": spec,
                "created_at": created_at,
            }
        )
        if cause is not UNSET:
            field_dict["cause"] = cause
        if operation_id is not UNSET:
            field_dict["operation_id"] = operation_id
        if created_by is not UNSET:
            field_dict["created_by"] = created_by

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.node_pool_spec import NodePoolSpec  # noqa: PLC0415

        d = dict(src_dict)
        generation = d.pop("generation")

        spec = NodePoolSpec.from_dict(d.pop("spec"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_cause(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cause = _parse_cause(d.pop("cause", UNSET))

        def _parse_operation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation_id = _parse_operation_id(d.pop("operation_id", UNSET))

        def _parse_created_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by = _parse_created_by(d.pop("created_by", UNSET))

        node_pool_revision_view = cls(
            generation=generation,
            spec=spec,
            created_at=created_at,
            cause=cause,
            operation_id=operation_id,
            created_by=created_by,
        )

        node_pool_revision_view.additional_properties = d
        return node_pool_revision_view

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
