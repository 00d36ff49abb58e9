from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container_port import ContainerPort
    from ..models.env_var import EnvVar
    from ..models.label_map import LabelMap
    from ..models.probes import Probes
    from ..models.resource_requests import ResourceRequests
    from ..models.rollout_strategy import RolloutStrategy
    from ..models.toleration import Toleration


T = TypeVar("T", bound="DeploymentSpec")


@_attrs_define
class DeploymentSpec:
    """Moke's portable description of a Deployment: one container, run as
    `replicas` pods. Written directly, or derived from a Kubernetes
    `apps/v1` Deployment manifest; both are stored in this form.

        Attributes:
            image (str): Container image reference, e.g. `registry.example.com/web:1.4.2` or `...@sha256:…`.
            replicas (int | Unset): Pods to run, 0 to 1000.
            ports (list[ContainerPort] | Unset):
            env (list[EnvVar] | Unset):
            resources (ResourceRequests | Unset): What one pod asks of its node.
            probes (Probes | Unset):
            strategy (RolloutStrategy | Unset): How a new revision replaces the pods of the old one.
            pod_labels (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
                characters.
            node_selector (LabelMap | Unset): Kubernetes-style labels: at most 64, keys `[prefix/]name`, values up to 63
                characters.
            tolerations (list[Toleration] | Unset):
            paused (bool | Unset): A paused deployment keeps running its current pods; template changes wait for `resume`.
            restarted_at (datetime.datetime | None | Unset): Set by `restart`: a new value rolls every pod.
            on_drift (str | Unset): What happens to a change made to this deployment through its
                cluster's own API (`kubectl edit`, `scale`, `set image`, `apply`):
                `revert` puts this spec back within a second and reports the change
                as the `Drifted` condition; `adopt` takes the change as a new
                revision (image, replicas, requests, environment, ports, node
                selector, tolerations, pausing, rollout bounds), checked as any
                update is (image policy, quotas, change limits), and puts it back
                if refused (the refusal is in the audit log). A manifest sets it
                with the annotation `moke.cloud/on-drift`.
    """

    image: str
    replicas: int | Unset = UNSET
    ports: list[ContainerPort] | Unset = UNSET
    env: list[EnvVar] | Unset = UNSET
    resources: ResourceRequests | Unset = UNSET
    probes: Probes | Unset = UNSET
    strategy: RolloutStrategy | Unset = UNSET
    pod_labels: LabelMap | Unset = UNSET
    node_selector: LabelMap | Unset = UNSET
    tolerations: list[Toleration] | Unset = UNSET
    paused: bool | Unset = UNSET
    restarted_at: datetime.datetime | None | Unset = UNSET
    on_drift: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        image = self.image

        replicas = self.replicas

        ports: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.ports, Unset):
            ports = []
            for ports_item_data in self.ports:
                ports_item = ports_item_data.to_dict()
                ports.append(ports_item)

        env: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = []
            for env_item_data in self.env:
                env_item = env_item_data.to_dict()
                env.append(env_item)

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        probes: dict[str, Any] | Unset = UNSET
        if not isinstance(self.probes, Unset):
            probes = self.probes.to_dict()

        strategy: dict[str, Any] | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.to_dict()

        pod_labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.pod_labels, Unset):
            pod_labels = self.pod_labels.to_dict()

        node_selector: dict[str, Any] | Unset = UNSET
        if not isinstance(self.node_selector, Unset):
            node_selector = self.node_selector.to_dict()

        tolerations: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.tolerations, Unset):
            tolerations = []
            for tolerations_item_data in self.tolerations:
                tolerations_item = tolerations_item_data.to_dict()
                tolerations.append(tolerations_item)

        paused = self.paused

        restarted_at: None | str | Unset
        if isinstance(self.restarted_at, Unset):
            restarted_at = UNSET
        elif isinstance(self.restarted_at, datetime.datetime):
            restarted_at = self.restarted_at.isoformat()
        else:
            restarted_at = self.restarted_at

        on_drift = self.on_drift

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "image": image,
            }
        )
        if replicas is not UNSET:
            field_dict["replicas"] = replicas
        if ports is not UNSET:
            field_dict["ports"] = ports
        if env is not UNSET:
            field_dict["env"] = env
        if resources is not UNSET:
            field_dict["resources"] = resources
        if probes is not UNSET:
            field_dict["probes"] = probes
        if strategy is not UNSET:
            field_dict["strategy"] = strategy
        if pod_labels is not UNSET:
            field_dict["pod_labels"] = pod_labels
        if node_selector is not UNSET:
            field_dict["node_selector"] = node_selector
        if tolerations is not UNSET:
            field_dict["tolerations"] = tolerations
        if paused is not UNSET:
            field_dict["paused"] = paused
        if restarted_at is not UNSET:
            field_dict["restarted_at"] = restarted_at
        if on_drift is not UNSET:
            field_dict["on_drift"] = on_drift

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container_port import ContainerPort  # noqa: PLC0415
        from ..models.env_var import EnvVar  # noqa: PLC0415
        from ..models.label_map import LabelMap  # noqa: PLC0415
        from ..models.probes import Probes  # noqa: PLC0415
        from ..models.resource_requests import ResourceRequests  # noqa: PLC0415
        from ..models.rollout_strategy import RolloutStrategy  # noqa: PLC0415
        from ..models.toleration import Toleration  # noqa: PLC0415

        d = dict(src_dict)
        image = d.pop("image")

        replicas = d.pop("replicas", UNSET)

        _ports = d.pop("ports", UNSET)
        ports: list[ContainerPort] | Unset = UNSET
        if _ports is not UNSET:
            ports = []
            for ports_item_data in _ports:
                ports_item = ContainerPort.from_dict(ports_item_data)

                ports.append(ports_item)

        _env = d.pop("env", UNSET)
        env: list[EnvVar] | Unset = UNSET
        if _env is not UNSET:
            env = []
            for env_item_data in _env:
                env_item = EnvVar.from_dict(env_item_data)

                env.append(env_item)

        _resources = d.pop("resources", UNSET)
        resources: ResourceRequests | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = ResourceRequests.from_dict(_resources)

        _probes = d.pop("probes", UNSET)
        probes: Probes | Unset
        if isinstance(_probes, Unset):
            probes = UNSET
        else:
            probes = Probes.from_dict(_probes)

        _strategy = d.pop("strategy", UNSET)
        strategy: RolloutStrategy | Unset
        if isinstance(_strategy, Unset):
            strategy = UNSET
        else:
            strategy = RolloutStrategy.from_dict(_strategy)

        _pod_labels = d.pop("pod_labels", UNSET)
        pod_labels: LabelMap | Unset
        if isinstance(_pod_labels, Unset):
            pod_labels = UNSET
        else:
            pod_labels = LabelMap.from_dict(_pod_labels)

        _node_selector = d.pop("node_selector", UNSET)
        node_selector: LabelMap | Unset
        if isinstance(_node_selector, Unset):
            node_selector = UNSET
        else:
            node_selector = LabelMap.from_dict(_node_selector)

        _tolerations = d.pop("tolerations", UNSET)
        tolerations: list[Toleration] | Unset = UNSET
        if _tolerations is not UNSET:
            tolerations = []
            for tolerations_item_data in _tolerations:
                tolerations_item = Toleration.from_dict(tolerations_item_data)

                tolerations.append(tolerations_item)

        paused = d.pop("paused", UNSET)

        def _parse_restarted_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                restarted_at_type_0 = datetime.datetime.fromisoformat(data)

                return restarted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        restarted_at = _parse_restarted_at(d.pop("restarted_at", UNSET))

        on_drift = d.pop("on_drift", UNSET)

        deployment_spec = cls(
            image=image,
            replicas=replicas,
            ports=ports,
            env=env,
            resources=resources,
            probes=probes,
            strategy=strategy,
            pod_labels=pod_labels,
            node_selector=node_selector,
            tolerations=tolerations,
            paused=paused,
            restarted_at=restarted_at,
            on_drift=on_drift,
        )

        return deployment_spec
