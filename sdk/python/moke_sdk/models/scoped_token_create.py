from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.action import Action
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScopedTokenCreate")


@_attrs_define
class ScopedTokenCreate:
    """A token for a service account or for yourself, optionally narrowed.

    Attributes:
        name (str): What the token is for: at most 100 characters, not only whitespace.
        project (None | str | Unset): Limit the token to one project (id or name) of the organization.
        scopes (list[Action] | None | Unset): Limit the token to these actions (at least one; see `iam/PERMISSIONS.md`).
        expires_in_seconds (int | None | Unset): Lifetime in seconds, 300 to 31536000; never expires if omitted
            (unless the organization's credential policy sets a longest lifetime).
    """

    name: str
    project: None | str | Unset = UNSET
    scopes: list[Action] | None | Unset = UNSET
    expires_in_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        project: None | str | Unset
        if isinstance(self.project, Unset):
            project = UNSET
        else:
            project = self.project

        scopes: list[str] | None | Unset
        if isinstance(self.scopes, Unset):
            scopes = UNSET
        elif isinstance(self.scopes, list):
            scopes = []
            for scopes_type_0_item_data in self.scopes:
                scopes_type_0_item = scopes_type_0_item_data.value
                scopes.append(scopes_type_0_item)

        else:
            scopes = self.scopes

        expires_in_seconds: int | None | Unset
        if isinstance(self.expires_in_seconds, Unset):
            expires_in_seconds = UNSET
        else:
            expires_in_seconds = self.expires_in_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if project is not UNSET:
            field_dict["project"] = project
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if expires_in_seconds is not UNSET:
            field_dict["expires_in_seconds"] = expires_in_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_project(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        project = _parse_project(d.pop("project", UNSET))

        def _parse_scopes(data: object) -> list[Action] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                scopes_type_0 = []
                _scopes_type_0 = data
                for scopes_type_0_item_data in _scopes_type_0:
                    scopes_type_0_item = Action(scopes_type_0_item_data)

                    scopes_type_0.append(scopes_type_0_item)

                return scopes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Action] | None | Unset, data)

        scopes = _parse_scopes(d.pop("scopes", UNSET))

        def _parse_expires_in_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_in_seconds = _parse_expires_in_seconds(d.pop("expires_in_seconds", UNSET))

        scoped_token_create = cls(
            name=name,
            project=project,
            scopes=scopes,
            expires_in_seconds=expires_in_seconds,
        )

        return scoped_token_create
