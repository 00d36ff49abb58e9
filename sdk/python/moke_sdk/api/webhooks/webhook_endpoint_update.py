from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.webhook_endpoint_update import WebhookEndpointUpdate
from ...models.webhook_endpoint_view import WebhookEndpointView
from ...types import Response


def _get_kwargs(
    org: str,
    endpoint: str,
    *,
    body: WebhookEndpointUpdate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/orgs/{org}/webhooks/{endpoint}".format(
            org=quote(str(org), safe=""),
            endpoint=quote(str(endpoint), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | WebhookEndpointView | None:
    if response.status_code == 200:
        response_200 = WebhookEndpointView.from_dict(response.json())

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
) -> Response[Problem | WebhookEndpointView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointUpdate,
) -> Response[Problem | WebhookEndpointView]:
    """Change a webhook endpoint: only the fields given change. The URL is checked as on create; `enabled:
    true`
    turns a disabled endpoint back on (clearing `disabled_at`, `disabled_reason` and `failing_since`),
    `false`
    disables it.

    Args:
        org (str):
        endpoint (str):
        body (WebhookEndpointUpdate): A change to a webhook endpoint: only the fields given
            change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookEndpointView]
    """

    kwargs = _get_kwargs(
        org=org,
        endpoint=endpoint,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointUpdate,
) -> Problem | WebhookEndpointView | None:
    """Change a webhook endpoint: only the fields given change. The URL is checked as on create; `enabled:
    true`
    turns a disabled endpoint back on (clearing `disabled_at`, `disabled_reason` and `failing_since`),
    `false`
    disables it.

    Args:
        org (str):
        endpoint (str):
        body (WebhookEndpointUpdate): A change to a webhook endpoint: only the fields given
            change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookEndpointView
    """

    return sync_detailed(
        org=org,
        endpoint=endpoint,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointUpdate,
) -> Response[Problem | WebhookEndpointView]:
    """Change a webhook endpoint: only the fields given change. The URL is checked as on create; `enabled:
    true`
    turns a disabled endpoint back on (clearing `disabled_at`, `disabled_reason` and `failing_since`),
    `false`
    disables it.

    Args:
        org (str):
        endpoint (str):
        body (WebhookEndpointUpdate): A change to a webhook endpoint: only the fields given
            change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookEndpointView]
    """

    kwargs = _get_kwargs(
        org=org,
        endpoint=endpoint,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointUpdate,
) -> Problem | WebhookEndpointView | None:
    """Change a webhook endpoint: only the fields given change. The URL is checked as on create; `enabled:
    true`
    turns a disabled endpoint back on (clearing `disabled_at`, `disabled_reason` and `failing_since`),
    `false`
    disables it.

    Args:
        org (str):
        endpoint (str):
        body (WebhookEndpointUpdate): A change to a webhook endpoint: only the fields given
            change.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookEndpointView
    """

    return (
        await asyncio_detailed(
            org=org,
            endpoint=endpoint,
            client=client,
            body=body,
        )
    ).parsed
