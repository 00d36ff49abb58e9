from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.release_channel import ReleaseChannel
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.control_plane_firewall import ControlPlaneFirewall
    from ..models.control_plane_spec import ControlPlaneSpec
    from ..models.maintenance_exclusion import MaintenanceExclusion
    from ..models.maintenance_window import MaintenanceWindow
    from ..models.snapshot_policy import SnapshotPolicy


T = TypeVar("T", bound="ClusterSpec")


@_attrs_define
class ClusterSpec:
    """The stored desired state of a cluster.

    Attributes:
        region (str):
        kubernetes_version (str):
        control_plane (ControlPlaneSpec):
        deletion_protection (bool):
        snapshot_policy (SnapshotPolicy): How often the control plane's etcd is snapshotted, and how many
            snapshots (scheduled and on-demand together) are kept: the oldest go first.
        control_plane_firewall (ControlPlaneFirewall): The addresses allowed to connect to the cluster's Kubernetes API
            endpoint (DOKS `control_plane_firewall`): others have their connections
            dropped before TLS. Client certificates are needed either way.
        release_channel (ReleaseChannel): The versions a cluster follows on its own (GKE's release channels).
            Automatic upgrades move one minor version at a time. The owners are
            told first (`cluster.upgrade_available`, and mail to verified owners;
            told again when the upgrade is still held 60 days after its notice
            period, or after an automatic upgrade was cancelled); an upgrade starts no sooner than
            the gateway's notice period later (a week by default), only inside the
            maintenance window (any time when there is none) and never on a day of
            a maintenance exclusion, and only on a cluster that runs as asked. A
            version past its end of life is upgraded that way on every channel,
            `none` included; exclusions hold such an upgrade only until 30 days
            after the end of life. A new cluster on a channel starts on its version
            unless it names one.
        maintenance_exclusions (list[MaintenanceExclusion]):
        maintenance_window (MaintenanceWindow | None | Unset):
    """

    region: str
    kubernetes_version: str
    control_plane: ControlPlaneSpec
    deletion_protection: bool
    snapshot_policy: SnapshotPolicy
    control_plane_firewall: ControlPlaneFirewall
    release_channel: ReleaseChannel
    maintenance_exclusions: list[MaintenanceExclusion]
    maintenance_window: MaintenanceWindow | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.maintenance_window import MaintenanceWindow  # noqa: PLC0415

        region = self.region

        kubernetes_version = self.kubernetes_version

        control_plane = self.control_plane.to_dict()

        deletion_protection = self.deletion_protection

        snapshot_policy = self.snapshot_policy.to_dict()

        control_plane_firewall = self.control_plane_firewall.to_dict()

        release_channel = self.release_channel.value

        maintenance_exclusions = []
        for maintenance_exclusions_item_data in self.maintenance_exclusions:
            maintenance_exclusions_item = maintenance_exclusions_item_data.to_dict()
            maintenance_exclusions.append(maintenance_exclusions_item)

        maintenance_window: dict[str, Any] | None | Unset
        if isinstance(self.maintenance_window, Unset):
            maintenance_window = UNSET
        elif isinstance(self.maintenance_window, MaintenanceWindow):
            maintenance_window = self.maintenance_window.to_dict()
        else:
            maintenance_window = self.maintenance_window

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "region": region,
                "kubernetes_version": kubernetes_version,
                "control_plane": control_plane,
                "deletion_protection": deletion_protection,
                "snapshot_policy": snapshot_policy,
                "control_plane_firewall": control_plane_firewall,
                "release_channel": release_channel,
                "maintenance_exclusions": maintenance_exclusions,
            }
        )
        if maintenance_window is not UNSET:
            field_dict["maintenance_window"] = maintenance_window

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.control_plane_firewall import ControlPlaneFirewall  # noqa: PLC0415
        from ..models.control_plane_spec import ControlPlaneSpec  # noqa: PLC0415
        from ..models.maintenance_exclusion import MaintenanceExclusion  # noqa: PLC0415
        from ..models.maintenance_window import MaintenanceWindow  # noqa: PLC0415
        from ..models.snapshot_policy import SnapshotPolicy  # noqa: PLC0415

        d = dict(src_dict)
        region = d.pop("region")

        kubernetes_version = d.pop("kubernetes_version")

        control_plane = ControlPlaneSpec.from_dict(d.pop("control_plane"))

        deletion_protection = d.pop("deletion_protection")

        snapshot_policy = SnapshotPolicy.from_dict(d.pop("snapshot_policy"))

        control_plane_firewall = ControlPlaneFirewall.from_dict(d.pop("control_plane_firewall"))

        release_channel = ReleaseChannel(d.pop("release_channel"))

        maintenance_exclusions = []
        _maintenance_exclusions = d.pop("maintenance_exclusions")
        for maintenance_exclusions_item_data in _maintenance_exclusions:
            maintenance_exclusions_item = MaintenanceExclusion.from_dict(maintenance_exclusions_item_data)

            maintenance_exclusions.append(maintenance_exclusions_item)

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

        cluster_spec = cls(
            region=region,
            kubernetes_version=kubernetes_version,
            control_plane=control_plane,
            deletion_protection=deletion_protection,
            snapshot_policy=snapshot_policy,
            control_plane_firewall=control_plane_firewall,
            release_channel=release_channel,
            maintenance_exclusions=maintenance_exclusions,
            maintenance_window=maintenance_window,
        )

        cluster_spec.additional_properties = d
        return cluster_spec

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
