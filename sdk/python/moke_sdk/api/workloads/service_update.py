from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.service_update import ServiceUpdate
from ...models.service_view import ServiceView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    cluster: str,
    namespace: str,
    service: str,
    *,
    body: ServiceUpdate,
    if_match: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_match, Unset):
        headers["If-Match"] = if_match

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services/{service}".format(
            project=quote(str(project), safe=""),
            cluster=quote(str(cluster), safe=""),
            namespace=quote(str(namespace), safe=""),
            service=quote(str(service), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ServiceView | None:
    if response.status_code == 200:
        response_200 = ServiceView.from_dict(response.json())

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
) -> Response[Problem | ServiceView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project: str,
    cluster: str,
    namespace: str,
    service: str,
    *,
    client: AuthenticatedClient,
    body: ServiceUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[Problem | ServiceView]:
    """Change a service: labels, and a merge patch of its `spec` or a new
    `manifest`. The change reaches the cluster's API through an Operation of
    kind `service_update` on the cluster (held up as `service_create`'s can
    be; one a later change overtakes fails as `superseded`).

    Args:
        project (str):
        cluster (str):
        namespace (str):
        service (str):
        if_match (None | str | Unset):
        body (ServiceUpdate): Change a service: `spec` is a JSON merge patch, or `manifest`
            replaces it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServiceView]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        namespace=namespace,
        service=service,
        body=body,
        if_match=if_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    cluster: str,
    namespace: str,
    service: str,
    *,
    client: AuthenticatedClient,
    body: ServiceUpdate,
    if_match: None | str | Unset = UNSET,
) -> Problem | ServiceView | None:
    """Change a service: labels, and a merge patch of its `spec` or a new
    `manifest`. The change reaches the cluster's API through an Operation of
    kind `service_update` on the cluster (held up as `service_create`'s can
    be; one a later change overtakes fails as `superseded`).

    Args:
        project (str):
        cluster (str):
        namespace (str):
        service (str):
        if_match (None | str | Unset):
        body (ServiceUpdate): Change a service: `spec` is a JSON merge patch, or `manifest`
            replaces it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServiceView
    """

    return sync_detailed(
        project=project,
        cluster=cluster,
        namespace=namespace,
        service=service,
        client=client,
        body=body,
        if_match=if_match,
    ).parsed


async def asyncio_detailed(
    project: str,
    cluster: str,
    namespace: str,
    service: str,
    *,
    client: AuthenticatedClient,
    body: ServiceUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[Problem | ServiceView]:
    """Change a service: labels, and a merge patch of its `spec` or a new
    `manifest`. The change reaches the cluster's API through an Operation of
    kind `service_update` on the cluster (held up as `service_create`'s can
    be; one a later change overtakes fails as `superseded`).

    Args:
        project (str):
        cluster (str):
        namespace (str):
        service (str):
        if_match (None | str | Unset):
        body (ServiceUpdate): Change a service: `spec` is a JSON merge patch, or `manifest`
            replaces it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServiceView]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        namespace=namespace,
        service=service,
        body=body,
        if_match=if_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    cluster: str,
    namespace: str,
    service: str,
    *,
    client: AuthenticatedClient,
    body: ServiceUpdate,
    if_match: None | str | Unset = UNSET,
) -> Problem | ServiceView | None:
    """Change a service: labels, and a merge patch of its `spec` or a new
    `manifest`. The change reaches the cluster's API through an Operation of
    kind `service_update` on the cluster (held up as `service_create`'s can
    be; one a later change overtakes fails as `superseded`).

    Args:
        project (str):
        cluster (str):
        namespace (str):
        service (str):
        if_match (None | str | Unset):
        body (ServiceUpdate): Change a service: `spec` is a JSON merge patch, or `manifest`
            replaces it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServiceView
    """

    return (
        await asyncio_detailed(
            project=project,
            cluster=cluster,
            namespace=namespace,
            service=service,
            client=client,
            body=body,
            if_match=if_match,
        )
    ).parsed
