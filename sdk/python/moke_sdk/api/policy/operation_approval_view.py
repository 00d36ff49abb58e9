from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.approval_view import ApprovalView
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    operation: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/operations/{operation}/approval".format(
            operation=quote(str(operation), safe=""),
        ),
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ApprovalView | Problem | None:
    if response.status_code == 200:
        response_200 = ApprovalView.from_dict(response.json())

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
) -> Response[ApprovalView | Problem]:
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
) -> Response[ApprovalView | Problem]:
    """View the approval request of an Operation the policy held: the rule,
    who asked, until when, the decision, and the change's plan (its dry run
    when asked for). 404 for an Operation never held.

    Args:
        operation (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApprovalView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    operation: str,
    *,
    client: AuthenticatedClient,
) -> ApprovalView | Problem | None:
    """View the approval request of an Operation the policy held: the rule,
    who asked, until when, the decision, and the change's plan (its dry run
    when asked for). 404 for an Operation never held.

    Args:
        operation (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApprovalView | Problem
    """

    return sync_detailed(
        operation=operation,
        client=client,
    ).parsed


async def asyncio_detailed(
    operation: str,
    *,
    client: AuthenticatedClient,
) -> Response[ApprovalView | Problem]:
    """View the approval request of an Operation the policy held: the rule,
    who asked, until when, the decision, and the change's plan (its dry run
    when asked for). 404 for an Operation never held.

    Args:
        operation (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApprovalView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    operation: str,
    *,
    client: AuthenticatedClient,
) -> ApprovalView | Problem | None:
    """View the approval request of an Operation the policy held: the rule,
    who asked, until when, the decision, and the change's plan (its dry run
    when asked for). 404 for an Operation never held.

    Args:
        operation (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApprovalView | Problem
    """

    return (
        await asyncio_detailed(
            operation=operation,
            client=client,
        )
    ).parsed
