from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.service_create import ServiceCreate
from ...models.service_view import ServiceView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    cluster: str,
    namespace: str,
    *,
    body: ServiceCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/projects/{project}/clusters/{cluster}/namespaces/{namespace}/services".format(
            project=quote(str(project), safe=""),
            cluster=quote(str(cluster), safe=""),
            namespace=quote(str(namespace), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ServiceView | None:
    if response.status_code == 201:
        response_201 = ServiceView.from_dict(response.json())

        return response_201

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
    *,
    client: AuthenticatedClient,
    body: ServiceCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | ServiceView]:
    """Create a service from the portable `spec` or a Kubernetes `manifest`.
    Its address comes from 10.96.0.10 to 10.103.255.255 and its node ports
    from 30000 up (the cluster gives Services made with kubectl the upper
    half of 10.96.0.0/12 and node ports from 32767 down). It reaches the
    cluster's API (kubectl), labelled `moke.dev/managed-by=moke`, through an
    Operation of kind `service_create` listed among the cluster's
    operations; while a Service made with kubectl holds its name or a node
    port asked for, that Operation runs, its step saying which, and the
    service goes in once they let go.

    Args:
        project (str):
        cluster (str):
        namespace (str):
        idempotency_key (None | str | Unset):
        body (ServiceCreate): Create a service from exactly one of `spec` or `manifest` (a
            Kubernetes `v1` Service).

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
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    cluster: str,
    namespace: str,
    *,
    client: AuthenticatedClient,
    body: ServiceCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | ServiceView | None:
    """Create a service from the portable `spec` or a Kubernetes `manifest`.
    Its address comes from 10.96.0.10 to 10.103.255.255 and its node ports
    from 30000 up (the cluster gives Services made with kubectl the upper
    half of 10.96.0.0/12 and node ports from 32767 down). It reaches the
    cluster's API (kubectl), labelled `moke.dev/managed-by=moke`, through an
    Operation of kind `service_create` listed among the cluster's
    operations; while a Service made with kubectl holds its name or a node
    port asked for, that Operation runs, its step saying which, and the
    service goes in once they let go.

    Args:
        project (str):
        cluster (str):
        namespace (str):
        idempotency_key (None | str | Unset):
        body (ServiceCreate): Create a service from exactly one of `spec` or `manifest` (a
            Kubernetes `v1` Service).

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
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    project: str,
    cluster: str,
    namespace: str,
    *,
    client: AuthenticatedClient,
    body: ServiceCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | ServiceView]:
    """Create a service from the portable `spec` or a Kubernetes `manifest`.
    Its address comes from 10.96.0.10 to 10.103.255.255 and its node ports
    from 30000 up (the cluster gives Services made with kubectl the upper
    half of 10.96.0.0/12 and node ports from 32767 down). It reaches the
    cluster's API (kubectl), labelled `moke.dev/managed-by=moke`, through an
    Operation of kind `service_create` listed among the cluster's
    operations; while a Service made with kubectl holds its name or a node
    port asked for, that Operation runs, its step saying which, and the
    service goes in once they let go.

    Args:
        project (str):
        cluster (str):
        namespace (str):
        idempotency_key (None | str | Unset):
        body (ServiceCreate): Create a service from exactly one of `spec` or `manifest` (a
            Kubernetes `v1` Service).

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
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    cluster: str,
    namespace: str,
    *,
    client: AuthenticatedClient,
    body: ServiceCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | ServiceView | None:
    """Create a service from the portable `spec` or a Kubernetes `manifest`.
    Its address comes from 10.96.0.10 to 10.103.255.255 and its node ports
    from 30000 up (the cluster gives Services made with kubectl the upper
    half of 10.96.0.0/12 and node ports from 32767 down). It reaches the
    cluster's API (kubectl), labelled `moke.dev/managed-by=moke`, through an
    Operation of kind `service_create` listed among the cluster's
    operations; while a Service made with kubectl holds its name or a node
    port asked for, that Operation runs, its step saying which, and the
    service goes in once they let go.

    Args:
        project (str):
        cluster (str):
        namespace (str):
        idempotency_key (None | str | Unset):
        body (ServiceCreate): Create a service from exactly one of `spec` or `manifest` (a
            Kubernetes `v1` Service).

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
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
