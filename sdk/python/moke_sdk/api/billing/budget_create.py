from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.budget_create import BudgetCreate
from ...models.budget_view import BudgetView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    *,
    body: BudgetCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/billing/budgets".format(
            org=quote(str(org), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BudgetView | Problem | None:
    if response.status_code == 201:
        response_201 = BudgetView.from_dict(response.json())

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
) -> Response[BudgetView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    *,
    client: AuthenticatedClient,
    body: BudgetCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[BudgetView | Problem]:
    """Set a monthly budget: each threshold reached alerts once a month, by an
    event webhook (`budget.threshold_reached`) and by mail to owners and
    billing members. At most 20 an organization. Needs `manage_billing`.

    Args:
        org (str):
        idempotency_key (None | str | Unset):
        body (BudgetCreate): A monthly budget: when the month's usage (before credits), or its
            forecast, reaches a threshold, a `budget.threshold_reached` event goes
            to the event webhooks subscribed to `budget.*` and a mail to the
            organization's owners and billing members, once per month and
            threshold. Budgets alert; they never stop anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BudgetView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org: str,
    *,
    client: AuthenticatedClient,
    body: BudgetCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> BudgetView | Problem | None:
    """Set a monthly budget: each threshold reached alerts once a month, by an
    event webhook (`budget.threshold_reached`) and by mail to owners and
    billing members. At most 20 an organization. Needs `manage_billing`.

    Args:
        org (str):
        idempotency_key (None | str | Unset):
        body (BudgetCreate): A monthly budget: when the month's usage (before credits), or its
            forecast, reaches a threshold, a `budget.threshold_reached` event goes
            to the event webhooks subscribed to `budget.*` and a mail to the
            organization's owners and billing members, once per month and
            threshold. Budgets alert; they never stop anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BudgetView | Problem
    """

    return sync_detailed(
        org=org,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    org: str,
    *,
    client: AuthenticatedClient,
    body: BudgetCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[BudgetView | Problem]:
    """Set a monthly budget: each threshold reached alerts once a month, by an
    event webhook (`budget.threshold_reached`) and by mail to owners and
    billing members. At most 20 an organization. Needs `manage_billing`.

    Args:
        org (str):
        idempotency_key (None | str | Unset):
        body (BudgetCreate): A monthly budget: when the month's usage (before credits), or its
            forecast, reaches a threshold, a `budget.threshold_reached` event goes
            to the event webhooks subscribed to `budget.*` and a mail to the
            organization's owners and billing members, once per month and
            threshold. Budgets alert; they never stop anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BudgetView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    *,
    client: AuthenticatedClient,
    body: BudgetCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> BudgetView | Problem | None:
    """Set a monthly budget: each threshold reached alerts once a month, by an
    event webhook (`budget.threshold_reached`) and by mail to owners and
    billing members. At most 20 an organization. Needs `manage_billing`.

    Args:
        org (str):
        idempotency_key (None | str | Unset):
        body (BudgetCreate): A monthly budget: when the month's usage (before credits), or its
            forecast, reaches a threshold, a `budget.threshold_reached` event goes
            to the event webhooks subscribed to `budget.*` and a mail to the
            organization's owners and billing members, once per month and
            threshold. Budgets alert; they never stop anything.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BudgetView | Problem
    """

    return (
        await asyncio_detailed(
            org=org,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
