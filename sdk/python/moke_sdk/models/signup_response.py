from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.org_view import OrgView
    from ..models.session_tokens import SessionTokens
    from ..models.user_view import UserView


T = TypeVar("T", bound="SignupResponse")


@_attrs_define
class SignupResponse:
    """
    Attributes:
        user (UserView):
        organization (OrgView):
        session (SessionTokens): A signed-in session: a short-lived access token and a refresh token.
    """

    user: UserView
    organization: OrgView
    session: SessionTokens
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        user = self.user.to_dict()

        organization = self.organization.to_dict()

        session = self.session.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user": user,
                "organization": organization,
                "session": session,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.org_view import OrgView  # noqa: PLC0415
        from ..models.session_tokens import SessionTokens  # noqa: PLC0415
        from ..models.user_view import UserView  # noqa: PLC0415

        d = dict(src_dict)
        user = UserView.from_dict(d.pop("user"))

        organization = OrgView.from_dict(d.pop("organization"))

        session = SessionTokens.from_dict(d.pop("session"))

        signup_response = cls(
            user=user,
            organization=organization,
            session=session,
        )

        signup_response.additional_properties = d
        return signup_response

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
