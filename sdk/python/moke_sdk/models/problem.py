from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_error_doc import FieldErrorDoc
    from ..models.quota_failure import QuotaFailure


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """An error answer (RFC 9457).

    Attributes:
        type_ (str): A URI naming the problem type.
        title (str):
        status (int):
        detail (str): What went wrong, for people.
        code (str): Stable machine-readable code, e.g. `invalid_request`, `not_found`, `quota_exceeded`.
        errors (list[FieldErrorDoc] | Unset): Every bad field, for `invalid_request`; the code's field when a
            one-time code is unknown, expired or used.
        quota (None | QuotaFailure | Unset):
        request_id (None | str | Unset): The request's `x-request-id`: quote it when you ask for help.
    """

    type_: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[FieldErrorDoc] | Unset = UNSET
    quota: None | QuotaFailure | Unset = UNSET
    request_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.quota_failure import QuotaFailure  # noqa: PLC0415

        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        code = self.code

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)

        quota: dict[str, Any] | None | Unset
        if isinstance(self.quota, Unset):
            quota = UNSET
        elif isinstance(self.quota, QuotaFailure):
            quota = self.quota.to_dict()
        else:
            quota = self.quota

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "title": title,
                "status": status,
                "detail": detail,
                "code": code,
            }
        )
        if errors is not UNSET:
            field_dict["errors"] = errors
        if quota is not UNSET:
            field_dict["quota"] = quota
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error_doc import FieldErrorDoc  # noqa: PLC0415
        from ..models.quota_failure import QuotaFailure  # noqa: PLC0415

        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        code = d.pop("code")

        _errors = d.pop("errors", UNSET)
        errors: list[FieldErrorDoc] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldErrorDoc.from_dict(errors_item_data)

                errors.append(errors_item)

        def _parse_quota(data: object) -> None | QuotaFailure | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quota_type_1 = QuotaFailure.from_dict(data)

                return quota_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | QuotaFailure | Unset, data)

        quota = _parse_quota(d.pop("quota", UNSET))

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            code=code,
            errors=errors,
            quota=quota,
            request_id=request_id,
        )

        problem.additional_properties = d
        return problem

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
