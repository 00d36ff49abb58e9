from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NodePoolRecycleRequest")


@_attrs_define
class NodePoolRecycleRequest:
    """Replace nodes of a pool (DOKS `recycle`): for each, one at a time, a
    new node joins first, then the old one is cordoned, drained and deleted,
    so the pool never runs below its count and pods move rather than stop.

        Attributes:
            nodes (list[str] | None | Unset):
    """

    nodes: list[str] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        nodes: list[str] | None | Unset
        if isinstance(self.nodes, Unset):
            nodes = UNSET
        elif isinstance(self.nodes, list):
            nodes = self.nodes

        else:
            nodes = self.nodes

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if nodes is not UNSET:
            field_dict["nodes"] = nodes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_nodes(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                nodes_type_1 = cast(list[str], data)

                return nodes_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        nodes = _parse_nodes(d.pop("nodes", UNSET))

        node_pool_recycle_request = cls(
            nodes=nodes,
        )

        return node_pool_recycle_request
