from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.org_role import OrgRole
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.membership_summary import MembershipSummary
    from ..models.user_view import UserView


T = TypeVar("T", bound="MeView")


@_attrs_define
class MeView:
    """Who the caller is and where it may act.

    Attributes:
        kind (str): `user` or `service_account`.
        id (str): `usr_…` or `sa_…`.
        organization (str): organization id, `org_` followed by 32 hex digits
        role (OrgRole): A role a principal holds in an organization.

            Users hold one through their membership; service accounts hold one
            of their own.
        memberships (list[MembershipSummary]):
        user (None | Unset | UserView):
    """

    kind: str
    id: str
    organization: str
    role: OrgRole
    memberships: list[MembershipSummary]
    user: None | Unset | UserView = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.user_view import UserView  # noqa: PLC0415

        kind = self.kind

        id = self.id

        organization = self.organization

        role = self.role.value

        memberships = []
        for memberships_item_data in self.memberships:
            memberships_item = memberships_item_data.to_dict()
            memberships.append(memberships_item)

        user: dict[str, Any] | None | Unset
        if isinstance(self.user, Unset):
            user = UNSET
        elif isinstance(self.user, UserView):
            user = self.user.to_dict()
        else:
            user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "id": id,
                "organization": organization,
                "role": role,
                "memberships": memberships,
            }
        )
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.membership_summary import MembershipSummary  # noqa: PLC0415
        from ..models.user_view import UserView  # noqa: PLC0415

        d = dict(src_dict)
        kind = d.pop("kind")

        id = d.pop("id")

        organization = d.pop("organization")

        role = OrgRole(d.pop("role"))

        memberships = []
        _memberships = d.pop("memberships")
        for memberships_item_data in _memberships:
            memberships_item = MembershipSummary.from_dict(memberships_item_data)

            memberships.append(memberships_item)

        def _parse_user(data: object) -> None | Unset | UserView:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                user_type_1 = UserView.from_dict(data)

                return user_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UserView, data)

        user = _parse_user(d.pop("user", UNSET))

        me_view = cls(
            kind=kind,
            id=id,
            organization=organization,
            role=role,
            memberships=memberships,
            user=user,
        )

        me_view.additional_properties = d
        return me_view

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
