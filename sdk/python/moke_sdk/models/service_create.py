from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.service_create_manifest_type_0 import ServiceCreateManifestType0
    from ..models.service_spec import ServiceSpec


T = TypeVar("T", bound="ServiceCreate")


@_attrs_define
class ServiceCreate:
    """Create a service from exactly one of `spec` or `manifest` (a Kubernetes `v1` Service).

    Attributes:
        name (str): Unique in its namespace; `kubernetes` in `default` is the cluster's
            own API server Service and is refused (400 `reserved`).
        labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
            characters.
        spec (None | ServiceSpec | Unset):
        manifest (None | ServiceCreateManifestType0 | Unset):
    """

    name: str
    labels: LabelMap | Unset = UNSET
    spec: None | ServiceSpec | Unset = UNSET
    manifest: None | ServiceCreateManifestType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.service_create_manifest_type_0 import ServiceCreateManifestType0  # noqa: PLC0415
        from ..models.service_spec import ServiceSpec  # noqa: PLC0415

        name = self.name

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        spec: dict[str, Any] | None | Unset
        if isinstance(self.spec, Unset):
            spec = UNSET
        elif isinstance(self.spec, ServiceSpec):
            spec = self.spec.to_dict()
        else:
            spec = self.spec

        manifest: dict[str, Any] | None | Unset
        if isinstance(self.manifest, Unset):
            manifest = UNSET
        elif isinstance(self.manifest, ServiceCreateManifestType0):
            manifest = self.manifest.to_dict()
        else:
            manifest = self.manifest

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if labels is not UNSET:
            field_dict["labels"] = labels
        if spec is not UNSET:
            field_dict["spec"] = spec
        if manifest is not UNSET:
            field_dict["manifest"] = manifest

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.service_create_manifest_type_0 import ServiceCreateManifestType0  # noqa: PLC0415
        from ..models.service_spec import ServiceSpec  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        def _parse_spec(data: object) -> None | ServiceSpec | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spec_type_1 = ServiceSpec.from_dict(data)

                return spec_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServiceSpec | Unset, data)

        spec = _parse_spec(d.pop("spec", UNSET))

        def _parse_manifest(data: object) -> None | ServiceCreateManifestType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                manifest_type_0 = ServiceCreateManifestType0.from_dict(data)

                return manifest_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServiceCreateManifestType0 | Unset, data)

        manifest = _parse_manifest(d.pop("manifest", UNSET))

        service_create = cls(
            name=name,
            labels=labels,
            spec=spec,
            manifest=manifest,
        )

        return service_create
