from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.deployment_create_manifest_type_0 import DeploymentCreateManifestType0
    from ..models.deployment_spec import DeploymentSpec
    from ..models.label_map import LabelMap


T = TypeVar("T", bound="DeploymentCreate")


@_attrs_define
class DeploymentCreate:
    """Create a deployment from exactly one of `spec` (the portable contract)
    or `manifest` (a Kubernetes `apps/v1` Deployment as a JSON object).

        Attributes:
            name (str):
            labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
                characters.
            spec (DeploymentSpec | None | Unset):
            manifest (DeploymentCreateManifestType0 | None | Unset):
    """

    name: str
    labels: LabelMap | Unset = UNSET
    spec: DeploymentSpec | None | Unset = UNSET
    manifest: DeploymentCreateManifestType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.deployment_create_manifest_type_0 import DeploymentCreateManifestType0  # noqa: PLC0415
        from ..models.deployment_spec import DeploymentSpec  # noqa: PLC0415

        name = self.name

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        spec: dict[str, Any] | None | Unset
        if isinstance(self.spec, Unset):
            spec = UNSET
        elif isinstance(self.spec, DeploymentSpec):
            spec = self.spec.to_dict()
        else:
            spec = self.spec

        manifest: dict[str, Any] | None | Unset
        if isinstance(self.manifest, Unset):
            manifest = UNSET
        elif isinstance(self.manifest, DeploymentCreateManifestType0):
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
        from ..models.deployment_create_manifest_type_0 import DeploymentCreateManifestType0  # noqa: PLC0415
        from ..models.deployment_spec import DeploymentSpec  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        _labels = d.pop("labels", UNSET)
        labels: LabelMap | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = LabelMap.from_dict(_labels)

        def _parse_spec(data: object) -> DeploymentSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                spec_type_1 = DeploymentSpec.from_dict(data)

                return spec_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeploymentSpec | None | Unset, data)

        spec = _parse_spec(d.pop("spec", UNSET))

        def _parse_manifest(data: object) -> DeploymentCreateManifestType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                manifest_type_0 = DeploymentCreateManifestType0.from_dict(data)

                return manifest_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeploymentCreateManifestType0 | None | Unset, data)

        manifest = _parse_manifest(d.pop("manifest", UNSET))

        deployment_create = cls(
            name=name,
            labels=labels,
            spec=spec,
            manifest=manifest,
        )

        return deployment_create
