from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.approval_decision import ApprovalDecision
from ...models.operation_view import OperationView
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    operation: str,
    *,
    body: ApprovalDecision,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/operations/{operation}/approve".format(
            operation=quote(str(operation), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

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
    body: ApprovalDecision,
) -> Response[OperationView | Problem]:
    """Approve a held change: it is made now, as the approver (who needs the
    rights it takes), on the resource as it is now, and its Operation
    starts. The approver is a person with the policy's approver role other
    than who asked, who held that role before the request was made (403
    `own_request`, `approver_role`, `approver_not_a_person`,
    `approver_too_recent`); 409 `not_awaiting_approval` for an Operation
    never held, `approval_closed` once rejected, withdrawn
    or expired, `approval_stale` once the resource changed since the request,
    `approval_moot` when the change no longer changes anything. Approving it
    again answers the Operation again.

    Args:
        operation (str):
        body (ApprovalDecision): An approver's decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OperationView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    operation: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> OperationView | Problem | None:
    """Approve a held change: it is made now, as the approver (who needs the
    rights it takes), on the resource as it is now, and its Operation
    starts. The approver is a person with the policy's approver role other
    than who asked, who held that role before the request was made (403
    `own_request`, `approver_role`, `approver_not_a_person`,
    `approver_too_recent`); 409 `not_awaiting_approval` for an Operation
    never held, `approval_closed` once rejected, withdrawn
    or expired, `approval_stale` once the resource changed since the request,
    `approval_moot` when the change no longer changes anything. Approving it
    again answers the Operation again.

    Args:
        operation (str):
        body (ApprovalDecision): An approver's decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OperationView | Problem
    """

    return sync_detailed(
        operation=operation,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    operation: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> Response[OperationView | Problem]:
    """Approve a held change: it is made now, as the approver (who needs the
    rights it takes), on the resource as it is now, and its Operation
    starts. The approver is a person with the policy's approver role other
    than who asked, who held that role before the request was made (403
    `own_request`, `approver_role`, `approver_not_a_person`,
    `approver_too_recent`); 409 `not_awaiting_approval` for an Operation
    never held, `approval_closed` once rejected, withdrawn
    or expired, `approval_stale` once the resource changed since the request,
    `approval_moot` when the change no longer changes anything. Approving it
    again answers the Operation again.

    Args:
        operation (str):
        body (ApprovalDecision): An approver's decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OperationView | Problem]
    """

    kwargs = _get_kwargs(
        operation=operation,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    operation: str,
    *,
    client: AuthenticatedClient,
    body: ApprovalDecision,
) -> OperationView | Problem | None:
    """Approve a held change: it is made now, as the approver (who needs the
    rights it takes), on the resource as it is now, and its Operation
    starts. The approver is a person with the policy's approver role other
    than who asked, who held that role before the request was made (403
    `own_request`, `approver_role`, `approver_not_a_person`,
    `approver_too_recent`); 409 `not_awaiting_approval` for an Operation
    never held, `approval_closed` once rejected, withdrawn
    or expired, `approval_stale` once the resource changed since the request,
    `approval_moot` when the change no longer changes anything. Approving it
    again answers the Operation again.

    Args:
        operation (str):
        body (ApprovalDecision): An approver's decision.

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
            body=body,
        )
    ).parsed
