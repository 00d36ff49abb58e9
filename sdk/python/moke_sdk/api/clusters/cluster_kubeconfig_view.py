from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cluster_access import ClusterAccess
from ...models.kubeconfig_format import KubeconfigFormat
from ...models.kubeconfig_view import KubeconfigView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    cluster: str,
    *,
    expiry_seconds: int | Unset = UNSET,
    access: ClusterAccess | Unset = UNSET,
    format_: KubeconfigFormat | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["expiry_seconds"] = expiry_seconds

    json_access: str | Unset = UNSET
    if not isinstance(access, Unset):
        json_access = access.value

    params["access"] = json_access

    json_format_: str | Unset = UNSET
    if not isinstance(format_, Unset):
        json_format_ = format_.value

    params["format"] = json_format_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/projects/{project}/clusters/{cluster}/kubeconfig".format(
            project=quote(str(project), safe=""),
            cluster=quote(str(cluster), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> KubeconfigView | Problem | None:
    if response.status_code == 200:
        response_200 = KubeconfigView.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 412:
        response_412 = Problem.from_dict(response.json())

        return response_412

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[KubeconfigView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project: str,
    cluster: str,
    *,
    client: AuthenticatedClient,
    expiry_seconds: int | Unset = UNSET,
    access: ClusterAccess | Unset = UNSET,
    format_: KubeconfigFormat | Unset = UNSET,
) -> Response[KubeconfigView | Problem]:
    """Get a kubeconfig for the cluster: a client certificate from the
    cluster's own CA naming you (CN) and your groups (O), derived from your role.

    Args:
        project (str):
        cluster (str):
        expiry_seconds (int | Unset):
        access (ClusterAccess | Unset): What a kubeconfig may do in the cluster (its Kubernetes
            groups).
        format_ (KubeconfigFormat | Unset): How the kubeconfig authenticates.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[KubeconfigView | Problem]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        expiry_seconds=expiry_seconds,
        access=access,
        format_=format_,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    cluster: str,
    *,
    client: AuthenticatedClient,
    expiry_seconds: int | Unset = UNSET,
    access: ClusterAccess | Unset = UNSET,
    format_: KubeconfigFormat | Unset = UNSET,
) -> KubeconfigView | Problem | None:
    """Get a kubeconfig for the cluster: a client certificate from the
    cluster's own CA naming you (CN) and your groups (O), derived from your role.

    Args:
        project (str):
        cluster (str):
        expiry_seconds (int | Unset):
        access (ClusterAccess | Unset): What a kubeconfig may do in the cluster (its Kubernetes
            groups).
        format_ (KubeconfigFormat | Unset): How the kubeconfig authenticates.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        KubeconfigView | Problem
    """

    return sync_detailed(
        project=project,
        cluster=cluster,
        client=client,
        expiry_seconds=expiry_seconds,
        access=access,
        format_=format_,
    ).parsed


async def asyncio_detailed(
    project: str,
    cluster: str,
    *,
    client: AuthenticatedClient,
    expiry_seconds: int | Unset = UNSET,
    access: ClusterAccess | Unset = UNSET,
    format_: KubeconfigFormat | Unset = UNSET,
) -> Response[KubeconfigView | Problem]:
    """Get a kubeconfig for the cluster: a client certificate from the
    cluster's own CA naming you (CN) and your groups (O), derived from your role.

    Args:
        project (str):
        cluster (str):
        expiry_seconds (int | Unset):
        access (ClusterAccess | Unset): What a kubeconfig may do in the cluster (its Kubernetes
            groups).
        format_ (KubeconfigFormat | Unset): How the kubeconfig authenticates.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[KubeconfigView | Problem]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        expiry_seconds=expiry_seconds,
        access=access,
        format_=format_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    cluster: str,
    *,
    client: AuthenticatedClient,
    expiry_seconds: int | Unset = UNSET,
    access: ClusterAccess | Unset = UNSET,
    format_: KubeconfigFormat | Unset = UNSET,
) -> KubeconfigView | Problem | None:
    """Get a kubeconfig for the cluster: a client certificate from the
    cluster's own CA naming you (CN) and your groups (O), derived from your role.

    Args:
        project (str):
        cluster (str):
        expiry_seconds (int | Unset):
        access (ClusterAccess | Unset): What a kubeconfig may do in the cluster (its Kubernetes
            groups).
        format_ (KubeconfigFormat | Unset): How the kubeconfig authenticates.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        KubeconfigView | Problem
    """

    return (
        await asyncio_detailed(
            project=project,
            cluster=cluster,
            client=client,
            expiry_seconds=expiry_seconds,
            access=access,
            format_=format_,
        )
    ).parsed
