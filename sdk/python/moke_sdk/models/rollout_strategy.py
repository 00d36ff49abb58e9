from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="RolloutStrategy")


@_attrs_define
class RolloutStrategy:
    """How a new revision replaces the pods of the old one.

    Attributes:
        max_surge (str | Unset): Extra pods allowed during a rollout: a count (`"1"`) or a percentage of replicas
            (`"25%"`, rounded up).
        max_unavailable (str | Unset): Pods that may be unavailable during a rollout: a count or a percentage (rounded
            down).
        progress_deadline_seconds (int | Unset): A rollout not finished after this long is marked failed.
        auto_rollback (bool | Unset): Roll back to the last revision that rolled out fully when a rollout fails.
    """

    max_surge: str | Unset = UNSET
    max_unavailable: str | Unset = UNSET
    progress_deadline_seconds: int | Unset = UNSET
    auto_rollback: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_surge = self.max_surge

        max_unavailable = self.max_unavailable

        progress_deadline_seconds = self.progress_deadline_seconds

        auto_rollback = self.auto_rollback

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_surge is not UNSET:
            field_dict["max_surge"] = max_surge
        if max_unavailable is not UNSET:
            field_dict["max_unavailable"] = max_unavailable
        if progress_deadline_seconds is not UNSET:
            field_dict["progress_deadline_seconds"] = progress_deadline_seconds
        if auto_rollback is not UNSET:
            field_dict["auto_rollback"] = auto_rollback

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_surge = d.pop("max_surge", UNSET)

        max_unavailable = d.pop("max_unavailable", UNSET)

        progress_deadline_seconds = d.pop("progress_deadline_seconds", UNSET)

        auto_rollback = d.pop("auto_rollback", UNSET)

        rollout_strategy = cls(
            max_surge=max_surge,
            max_unavailable=max_unavailable,
            progress_deadline_seconds=progress_deadline_seconds,
            auto_rollback=auto_rollback,
        )

        return rollout_strategy
