from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.operation_view import OperationView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    operation: str,
    *,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/operations/{operation}/cancel".format(
            operation=quote(str(operation), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OperationView | Problem | None:
    if response.status_code == 200:
        response_200 = OperationView.from_dict(response.json())

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
) -> Response[OperationView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    operation: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[OperationView | Problem]:
    """Cancel a spec change (`cluster_update`, `node_pool_update`), or a
    `cluster_upgrade`, `node_pool_recycle`, `cluster_snapshot` or
    `cluster_restore` the region has not received: the spec it replaced is
    written back as the next generation, by an Operation of its own, so a
    region that had not started does nothing and one part-way through stops
    between steps and converges back. The operation fails with error code
    `cancelled`; cancelling it again answers it again. 409 `not_cancellable`
    (with the reason) for other kinds, `operation_finished` once it has
    ended, `superseded` when a later change of the same resource followed,
    `operation_started` for one of the four the region already has.
    Cancelling takes the rights starting the work takes (cluster-admin rights
    for a restore).

    Args:
        operation (str):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OperationView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    operation: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,
) -> OperationView | Problem | None:
    """Cancel a spec change (`cluster_update`, `node_pool_update`), or a
    `cluster_upgrade`, `node_pool_recycle`, `cluster_snapshot` or
    `cluster_restore` the region has not received: the spec it replaced is
    written back as the next generation, by an Operation of its own, so a
    region that had not started does nothing and one part-way through stops
    between steps and converges back. The operation fails with error code
    `cancelled`; cancelling it again answers it again. 409 `not_cancellable`
    (with the reason) for other kinds, `operation_finished` once it has
    ended, `superseded` when a later change of the same resource followed,
    `operation_started` for one of the four the region already has.
    Cancelling takes the rights starting the work takes (cluster-admin rights
    for a restore).

    Args:
        operation (str):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OperationView | Problem
    """

    return sync_detailed(
        operation=operation,
        client=client,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    operation: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[OperationView | Problem]:
    """Cancel a spec change (`cluster_update`, `node_pool_update`), or a
    `cluster_upgrade`, `node_pool_recycle`, `cluster_snapshot` or
    `cluster_restore` the region has not received: the spec it replaced is
    written back as the next generation, by an Operation of its own, so a
    region that had not started does nothing and one part-way through stops
    between steps and converges back. The operation fails with error code
    `cancelled`; cancelling it again answers it again. 409 `not_cancellable`
    (with the reason) for other kinds, `operation_finished` once it has
    ended, `superseded` when a later change of the same resource followed,
    `operation_started` for one of the four the region already has.
    Cancelling takes the rights starting the work takes (cluster-admin rights
    for a restore).

    Args:
        operation (str):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OperationView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    operation: str,
    *,
    client: AuthenticatedClient,
    idempotency_key: None | str | Unset = UNSET,
) -> OperationView | Problem | None:
    """Cancel a spec change (`cluster_update`, `node_pool_update`), or a
    `cluster_upgrade`, `node_pool_recycle`, `cluster_snapshot` or
    `cluster_restore` the region has not received: the spec it replaced is
    written back as the next generation, by an Operation of its own, so a
    region that had not started does nothing and one part-way through stops
    between steps and converges back. The operation fails with error code
    `cancelled`; cancelling it again answers it again. 409 `not_cancellable`
    (with the reason) for other kinds, `operation_finished` once it has
    ended, `superseded` when a later change of the same resource followed,
    `operation_started` for one of the four the region already has.
    Cancelling takes the rights starting the work takes (cluster-admin rights
    for a restore).

    Args:
        operation (str):
        idempotency_key (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OperationView | Problem
    """

    return (
        await asyncio_detailed(
            operation=operation,
            client=client,
            idempotency_key=idempotency_key,
        )
    ).parsed
