from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.label_map import LabelMap
    from ..models.service_update_manifest_type_0 import ServiceUpdateManifestType0
    from ..models.service_update_spec_type_0 import ServiceUpdateSpecType0


T = TypeVar("T", bound="ServiceUpdate")


@_attrs_define
class ServiceUpdate:
    """Change a service: `spec` is a JSON merge patch, or `manifest` replaces it.

    Attributes:
        labels (LabelMap | None | Unset):
        spec (None | ServiceUpdateSpecType0 | Unset):
        manifest (None | ServiceUpdateManifestType0 | Unset):
    """

    labels: LabelMap | None | Unset = UNSET
    spec: None | ServiceUpdateSpecType0 | Unset = UNSET
    manifest: None | ServiceUpdateManifestType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.service_update_manifest_type_0 import ServiceUpdateManifestType0  # noqa: PLC0415
        from ..models.service_update_spec_type_0 import ServiceUpdateSpecType0  # noqa: PLC0415

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, LabelMap):
            labels = self.labels.to_dict()
        else:
            labels = self.labels

        spec: dict[str, Any] | None | Unset
        if isinstance(self.spec, Unset):
            spec = UNSET
        elif isinstance(self.spec, ServiceUpdateSpecType0):
            spec = self.spec.to_dict()
        else:
            spec = self.spec

        manifest: dict[str, Any] | None | Unset
        if isinstance(self.manifest, Unset):
            manifest = UNSET
        elif isinstance(self.manifest, ServiceUpdateManifestType0):
            manifest = self.manifest.to_dict()
        else:
            manifest = self.manifest

        field_dict: dict[str, Any] = {}

        field_dict.update({})
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
        from ..models.service_update_manifest_type_0 import ServiceUpdateManifestType0  # noqa: PLC0415
        from ..models.service_update_spec_type_0 import ServiceUpdateSpecType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_labels(data: object) -> LabelMap | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_1 = LabelMap.from_dict(data)

                return labels_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LabelMap | None | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        def _parse_spec(data: object) -> None | ServiceUpdateSpecType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spec_type_0 = ServiceUpdateSpecType0.from_dict(data)

                return spec_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServiceUpdateSpecType0 | Unset, data)

        spec = _parse_spec(d.pop("spec", UNSET))

        def _parse_manifest(data: object) -> None | ServiceUpdateManifestType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                manifest_type_0 = ServiceUpdateManifestType0.from_dict(data)

                return manifest_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServiceUpdateManifestType0 | Unset, data)

        manifest = _parse_manifest(d.pop("manifest", UNSET))

        service_update = cls(
            labels=labels,
            spec=spec,
            manifest=manifest,
        )

        return service_update
