from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.hook_rule import HookRule
    from ..models.hook_target import HookTarget


T = TypeVar("T", bound="DeployHookCreate")


@_attrs_define
class DeployHookCreate:
    """Create a deploy webhook: for one deployment (`target`) or for the
    project with `rules`.

        Attributes:
            name (str):
            target (HookTarget | None | Unset):
            rules (list[HookRule] | Unset):
            image_template (None | str | Unset): For events that name a commit or tag but no image: `{sha}`, `{tag}` and
                `{branch}` are filled in,
                e.g. `registry.example.com/shop/web:{sha}`.
    """

    name: str
    target: HookTarget | None | Unset = UNSET
    rules: list[HookRule] | Unset = UNSET
    image_template: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.hook_target import HookTarget  # noqa: PLC0415

        name = self.name

        target: dict[str, Any] | None | Unset
        if isinstance(self.target, Unset):
            target = UNSET
        elif isinstance(self.target, HookTarget):
            target = self.target.to_dict()
        else:
            target = self.target

        rules: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.rules, Unset):
            rules = []
            for rules_item_data in self.rules:
                rules_item = rules_item_data.to_dict()
                rules.append(rules_item)

        image_template: None | str | Unset
        if isinstance(self.image_template, Unset):
            image_template = UNSET
        else:
            image_template = self.image_template

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if target is not UNSET:
            field_dict["target"] = target
        if rules is not UNSET:
            field_dict["rules"] = rules
        if image_template is not UNSET:
            field_dict["image_template"] = image_template

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hook_rule import HookRule  # noqa: PLC0415
        from ..models.hook_target import HookTarget  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_target(data: object) -> HookTarget | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                target_type_1 = HookTarget.from_dict(data)

                return target_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(HookTarget | None | Unset, data)

        target = _parse_target(d.pop("target", UNSET))

        _rules = d.pop("rules", UNSET)
        rules: list[HookRule] | Unset = UNSET
        if _rules is not UNSET:
            rules = []
            for rules_item_data in _rules:
                rules_item = HookRule.from_dict(rules_item_data)

                rules.append(rules_item)

        def _parse_image_template(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_template = _parse_image_template(d.pop("image_template", UNSET))

        deploy_hook_create = cls(
            name=name,
            target=target,
            rules=rules,
            image_template=image_template,
        )

        return deploy_hook_create
