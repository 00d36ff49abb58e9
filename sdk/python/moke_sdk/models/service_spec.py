from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.selector_map import SelectorMap
    from ..models.service_port import ServicePort


T = TypeVar("T", bound="ServiceSpec")


@_attrs_define
class ServiceSpec:
    """A Service: a stable address in front of the pods its selector matches.

    Attributes:
        selector (SelectorMap): Labels the selected pods all carry: at least one.
        ports (list[ServicePort]): Each port and protocol once; every port named when there are several.
        type_ (str | Unset): `ClusterIP` (default) or `NodePort`.
    """

    selector: SelectorMap
    ports: list[ServicePort]
    type_: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        selector = self.selector.to_dict()

        ports = []
        for ports_item_data in self.ports:
            ports_item = ports_item_data.to_dict()
            ports.append(ports_item)

        type_ = self.type_

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "selector": selector,
                "ports": ports,
            }
        )
        if type_ is not UNSET:
            field_dict["type"] = type_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.selector_map import SelectorMap  # noqa: PLC0415
        from ..models.service_port import ServicePort  # noqa: PLC0415

        d = dict(src_dict)
        selector = SelectorMap.from_dict(d.pop("selector"))

        ports = []
        _ports = d.pop("ports")
        for ports_item_data in _ports:
            ports_item = ServicePort.from_dict(ports_item_data)

            ports.append(ports_item)

        type_ = d.pop("type", UNSET)

        service_spec = cls(
            selector=selector,
            ports=ports,
            type_=type_,
        )

        return service_spec
