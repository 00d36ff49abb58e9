from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.planned_approval import PlannedApproval
    from ..models.planned_change import PlannedChange
    from ..models.planned_operation import PlannedOperation


T = TypeVar("T", bound="DryRunView")


@_attrs_define
class DryRunView:
    """What a mutation would do, answered to a dry run (`?dry_run=true` on
    REST, `moke-validate-only: true` metadata on gRPC, `dryRun: true` on
    GraphQL) in place of its usual answer. The request went through
    everything up to its commit (validation, authorization, quotas, the
    region's backlog) and then wrote nothing: no row, no command to a
    region, no mail, no webhook, no audit event. A request a real call would
    refuse is refused the same way.

        Attributes:
            dry_run (bool): Always `true`: nothing was changed.
            changes (list[PlannedChange]): Each change the request would record, in order, as its audit event
                would name it; empty when it would change nothing.
            operations (list[PlannedOperation]): The Operations it would start, with the steps each would take.
            approval (None | PlannedApproval | Unset):
    """

    dry_run: bool
    changes: list[PlannedChange]
    operations: list[PlannedOperation]
    approval: None | PlannedApproval | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.planned_approval import PlannedApproval  # noqa: PLC0415

        dry_run = self.dry_run

        changes = []
        for changes_item_data in self.changes:
            changes_item = changes_item_data.to_dict()
            changes.append(changes_item)

        operations = []
        for operations_item_data in self.operations:
            operations_item = operations_item_data.to_dict()
            operations.append(operations_item)

        approval: dict[str, Any] | None | Unset
        if isinstance(self.approval, Unset):
            approval = UNSET
        elif isinstance(self.approval, PlannedApproval):
            approval = self.approval.to_dict()
        else:
            approval = self.approval

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dry_run": dry_run,
                "changes": changes,
                "operations": operations,
            }
        )
        if approval is not UNSET:
            field_dict["approval"] = approval

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.planned_approval import PlannedApproval  # noqa: PLC0415
        from ..models.planned_change import PlannedChange  # noqa: PLC0415
        from ..models.planned_operation import PlannedOperation  # noqa: PLC0415

        d = dict(src_dict)
        dry_run = d.pop("dry_run")

        changes = []
        _changes = d.pop("changes")
        for changes_item_data in _changes:
            changes_item = PlannedChange.from_dict(changes_item_data)

            changes.append(changes_item)

        operations = []
        _operations = d.pop("operations")
        for operations_item_data in _operations:
            operations_item = PlannedOperation.from_dict(operations_item_data)

            operations.append(operations_item)

        def _parse_approval(data: object) -> None | PlannedApproval | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approval_type_1 = PlannedApproval.from_dict(data)

                return approval_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PlannedApproval | Unset, data)

        approval = _parse_approval(d.pop("approval", UNSET))

        dry_run_view = cls(
            dry_run=dry_run,
            changes=changes,
            operations=operations,
            approval=approval,
        )

        dry_run_view.additional_properties = d
        return dry_run_view

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
