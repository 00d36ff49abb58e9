from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.release_channel import ReleaseChannel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.control_plane_firewall import ControlPlaneFirewall
    from ..models.control_plane_input import ControlPlaneInput
    from ..models.maintenance_exclusion import MaintenanceExclusion
    from ..models.maintenance_window import MaintenanceWindow
    from ..models.snapshot_policy import SnapshotPolicy


T = TypeVar("T", bound="ClusterSpecInput")


@_attrs_define
class ClusterSpecInput:
    """The desired cluster as a client writes it; omitted fields get defaults.

    Attributes:
        region (str): A region from `GET /v1/regions`. Cannot change later.
        kubernetes_version (None | str | Unset): A version from `GET /v1/kubernetes-versions`; if omitted, the
            release channel's version, or else the default one.
        control_plane (ControlPlaneInput | None | Unset):
        maintenance_window (MaintenanceWindow | None | Unset):
        deletion_protection (bool | None | Unset): When true, deletion is refused until it is turned off. Default false.
        snapshot_policy (None | SnapshotPolicy | Unset):
        control_plane_firewall (ControlPlaneFirewall | None | Unset):
        release_channel (None | ReleaseChannel | Unset):
        maintenance_exclusions (list[MaintenanceExclusion] | None | Unset): Days on which no automatic upgrade starts;
            none if omitted.
    """

    region: str
    kubernetes_version: None | str | Unset = UNSET
    control_plane: ControlPlaneInput | None | Unset = UNSET
    maintenance_window: MaintenanceWindow | None | Unset = UNSET
    deletion_protection: bool | None | Unset = UNSET
    snapshot_policy: None | SnapshotPolicy | Unset = UNSET
    control_plane_firewall: ControlPlaneFirewall | None | Unset = UNSET
    release_channel: None | ReleaseChannel | Unset = UNSET
    maintenance_exclusions: list[MaintenanceExclusion] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.control_plane_firewall import ControlPlaneFirewall  # noqa: PLC0415
        from ..models.control_plane_input import ControlPlaneInput  # noqa: PLC0415
        from ..models.maintenance_window import MaintenanceWindow  # noqa: PLC0415
        from ..models.snapshot_policy import SnapshotPolicy  # noqa: PLC0415

        region = self.region

        kubernetes_version: None | str | Unset
        if isinstance(self.kubernetes_version, Unset):
            kubernetes_version = UNSET
        else:
            kubernetes_version = self.kubernetes_version

        control_plane: dict[str, Any] | None | Unset
        if isinstance(self.control_plane, Unset):
            control_plane = UNSET
        elif isinstance(self.control_plane, ControlPlaneInput):
            control_plane = self.control_plane.to_dict()
        else:
            control_plane = self.control_plane

        maintenance_window: dict[str, Any] | None | Unset
        if isinstance(self.maintenance_window, Unset):
            maintenance_window = UNSET
        elif isinstance(self.maintenance_window, MaintenanceWindow):
            maintenance_window = self.maintenance_window.to_dict()
        else:
            maintenance_window = self.maintenance_window

        deletion_protection: bool | None | Unset
        if isinstance(self.deletion_protection, Unset):
            deletion_protection = UNSET
        else:
            deletion_protection = self.deletion_protection

        snapshot_policy: dict[str, Any] | None | Unset
        if isinstance(self.snapshot_policy, Unset):
            snapshot_policy = UNSET
        elif isinstance(self.snapshot_policy, SnapshotPolicy):
            snapshot_policy = self.snapshot_policy.to_dict()
        else:
            snapshot_policy = self.snapshot_policy

        control_plane_firewall: dict[str, Any] | None | Unset
        if isinstance(self.control_plane_firewall, Unset):
            control_plane_firewall = UNSET
        elif isinstance(self.control_plane_firewall, ControlPlaneFirewall):
            control_plane_firewall = self.control_plane_firewall.to_dict()
        else:
            control_plane_firewall = self.control_plane_firewall

        release_channel: None | str | Unset
        if isinstance(self.release_channel, Unset):
            release_channel = UNSET
        elif isinstance(self.release_channel, ReleaseChannel):
            release_channel = self.release_channel.value
        else:
            release_channel = self.release_channel

        maintenance_exclusions: list[dict[str, Any]] | None | Unset
        if isinstance(self.maintenance_exclusions, Unset):
            maintenance_exclusions = UNSET
        elif isinstance(self.maintenance_exclusions, list):
            maintenance_exclusions = []
            for maintenance_exclusions_type_0_item_data in self.maintenance_exclusions:
                maintenance_exclusions_type_0_item = maintenance_exclusions_type_0_item_data.to_dict()
                maintenance_exclusions.append(maintenance_exclusions_type_0_item)

        else:
            maintenance_exclusions = self.maintenance_exclusions

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "region": region,
            }
        )
        if kubernetes_version is not UNSET:
            field_dict["kubernetes_version"] = kubernetes_version
        if control_plane is not UNSET:
            field_dict["control_plane"] = control_plane
        if maintenance_window is not UNSET:
            field_dict["maintenance_window"] = maintenance_window
        if deletion_protection is not UNSET:
            field_dict["deletion_protection"] = deletion_protection
        if snapshot_policy is not UNSET:
            field_dict["snapshot_policy"] = snapshot_policy
        if control_plane_firewall is not UNSET:
            field_dict["control_plane_firewall"] = control_plane_firewall
        if release_channel is not UNSET:
            field_dict["release_channel"] = release_channel
        if maintenance_exclusions is not UNSET:
            field_dict["maintenance_exclusions"] = maintenance_exclusions

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.control_plane_firewall import ControlPlaneFirewall  # noqa: PLC0415
        from ..models.control_plane_input import ControlPlaneInput  # noqa: PLC0415
        from ..models.maintenance_exclusion import MaintenanceExclusion  # noqa: PLC0415
        from ..models.maintenance_window import MaintenanceWindow  # noqa: PLC0415
        from ..models.snapshot_policy import SnapshotPolicy  # noqa: PLC0415

        d = dict(src_dict)
        region = d.pop("region")

        def _parse_kubernetes_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        kubernetes_version = _parse_kubernetes_version(d.pop("kubernetes_version", UNSET))

        def _parse_control_plane(data: object) -> ControlPlaneInput | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                control_plane_type_1 = ControlPlaneInput.from_dict(data)

                return control_plane_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ControlPlaneInput | None | Unset, data)

        control_plane = _parse_control_plane(d.pop("control_plane", UNSET))

        def _parse_maintenance_window(data: object) -> MaintenanceWindow | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                maintenance_window_type_1 = MaintenanceWindow.from_dict(data)

                return maintenance_window_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MaintenanceWindow | None | Unset, data)

        maintenance_window = _parse_maintenance_window(d.pop("maintenance_window", UNSET))

        def _parse_deletion_protection(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        deletion_protection = _parse_deletion_protection(d.pop("deletion_protection", UNSET))

        def _parse_snapshot_policy(data: object) -> None | SnapshotPolicy | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                snapshot_policy_type_1 = SnapshotPolicy.from_dict(data)

                return snapshot_policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SnapshotPolicy | Unset, data)

        snapshot_policy = _parse_snapshot_policy(d.pop("snapshot_policy", UNSET))

        def _parse_control_plane_firewall(data: object) -> ControlPlaneFirewall | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                control_plane_firewall_type_1 = ControlPlaneFirewall.from_dict(data)

                return control_plane_firewall_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ControlPlaneFirewall | None | Unset, data)

        control_plane_firewall = _parse_control_plane_firewall(d.pop("control_plane_firewall", UNSET))

        def _parse_release_channel(data: object) -> None | ReleaseChannel | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                release_channel_type_1 = ReleaseChannel(data)

                return release_channel_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ReleaseChannel | Unset, data)

        release_channel = _parse_release_channel(d.pop("release_channel", UNSET))

        def _parse_maintenance_exclusions(data: object) -> list[MaintenanceExclusion] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                maintenance_exclusions_type_0 = []
                _maintenance_exclusions_type_0 = data
                for maintenance_exclusions_type_0_item_data in _maintenance_exclusions_type_0:
                    maintenance_exclusions_type_0_item = MaintenanceExclusion.from_dict(
                        maintenance_exclusions_type_0_item_data
                    )

                    maintenance_exclusions_type_0.append(maintenance_exclusions_type_0_item)

                return maintenance_exclusions_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[MaintenanceExclusion] | None | Unset, data)

        maintenance_exclusions = _parse_maintenance_exclusions(d.pop("maintenance_exclusions", UNSET))

        cluster_spec_input = cls(
            region=region,
            kubernetes_version=kubernetes_version,
            control_plane=control_plane,
            maintenance_window=maintenance_window,
            deletion_protection=deletion_protection,
            snapshot_policy=snapshot_policy,
            control_plane_firewall=control_plane_firewall,
            release_channel=release_channel,
            maintenance_exclusions=maintenance_exclusions,
        )

        return cluster_spec_input
