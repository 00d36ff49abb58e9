from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.hook_target import HookTarget


T = TypeVar("T", bound="HookRule")


@_attrs_define
class HookRule:
    """A project hook's rule: deliveries from `repository` (when set) of images
    starting with `image_prefix` (when set) change `target`.

        Attributes:
            target (HookTarget): The deployment a webhook (or one of its rules) changes.
            repository (None | str | Unset): e.g. `acme/web` (GitHub `owner/repo`, GitLab `group/project`).
            image_prefix (None | str | Unset):
    """

    target: HookTarget
    repository: None | str | Unset = UNSET
    image_prefix: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        target = self.target.to_dict()

        repository: None | str | Unset
        if isinstance(self.repository, Unset):
            repository = UNSET
        else:
            repository = self.repository

        image_prefix: None | str | Unset
        if isinstance(self.image_prefix, Unset):
            image_prefix = UNSET
        else:
            image_prefix = self.image_prefix

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "target": target,
            }
        )
        if repository is not UNSET:
            field_dict["repository"] = repository
        if image_prefix is not UNSET:
            field_dict["image_prefix"] = image_prefix

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hook_target import HookTarget  # noqa: PLC0415

        d = dict(src_dict)
        target = HookTarget.from_dict(d.pop("target"))

        def _parse_repository(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repository = _parse_repository(d.pop("repository", UNSET))

        def _parse_image_prefix(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_prefix = _parse_image_prefix(d.pop("image_prefix", UNSET))

        hook_rule = cls(
            target=target,
            repository=repository,
            image_prefix=image_prefix,
        )

        return hook_rule
