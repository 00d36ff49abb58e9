from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.webhook_endpoint_created import WebhookEndpointCreated
from ...models.webhook_endpoint_secret_rotate import WebhookEndpointSecretRotate
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    endpoint: str,
    *,
    body: WebhookEndpointSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/webhooks/{endpoint}/rotate-secret".format(
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
) -> Problem | WebhookEndpointCreated | None:
    if response.status_code == 200:
        response_200 = WebhookEndpointCreated.from_dict(response.json())

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
) -> Response[Problem | WebhookEndpointCreated]:
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
    body: WebhookEndpointSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | WebhookEndpointCreated]:
    """Rotate a webhook endpoint's signing secret. The answer holds the new secret, shown only once;
    deliveries are
    signed with it from now on and, for `previous_secret_valid_seconds` (24 h by default; 0: not at
    all), with the
    previous one too (two `v1,` signatures in `webhook-signature`), so the receiver can switch without
    refusing one.
    A retry with the same Idempotency-Key answers the endpoint again, without its secret.

    Args:
        org (str):
        endpoint (str):
        idempotency_key (None | str | Unset):
        body (WebhookEndpointSecretRotate): Rotating an endpoint's signing secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookEndpointCreated]
    """

    kwargs = _get_kwargs(
        org=org,
        endpoint=endpoint,
        body=body,
        idempotency_key=idempotency_key,
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
    body: WebhookEndpointSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | WebhookEndpointCreated | None:
    """Rotate a webhook endpoint's signing secret. The answer holds the new secret, shown only once;
    deliveries are
    signed with it from now on and, for `previous_secret_valid_seconds` (24 h by default; 0: not at
    all), with the
    previous one too (two `v1,` signatures in `webhook-signature`), so the receiver can switch without
    refusing one.
    A retry with the same Idempotency-Key answers the endpoint again, without its secret.

    Args:
        org (str):
        endpoint (str):
        idempotency_key (None | str | Unset):
        body (WebhookEndpointSecretRotate): Rotating an endpoint's signing secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookEndpointCreated
    """

    return sync_detailed(
        org=org,
        endpoint=endpoint,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | WebhookEndpointCreated]:
    """Rotate a webhook endpoint's signing secret. The answer holds the new secret, shown only once;
    deliveries are
    signed with it from now on and, for `previous_secret_valid_seconds` (24 h by default; 0: not at
    all), with the
    previous one too (two `v1,` signatures in `webhook-signature`), so the receiver can switch without
    refusing one.
    A retry with the same Idempotency-Key answers the endpoint again, without its secret.

    Args:
        org (str):
        endpoint (str):
        idempotency_key (None | str | Unset):
        body (WebhookEndpointSecretRotate): Rotating an endpoint's signing secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WebhookEndpointCreated]
    """

    kwargs = _get_kwargs(
        org=org,
        endpoint=endpoint,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    endpoint: str,
    *,
    client: AuthenticatedClient,
    body: WebhookEndpointSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | WebhookEndpointCreated | None:
    """Rotate a webhook endpoint's signing secret. The answer holds the new secret, shown only once;
    deliveries are
    signed with it from now on and, for `previous_secret_valid_seconds` (24 h by default; 0: not at
    all), with the
    previous one too (two `v1,` signatures in `webhook-signature`), so the receiver can switch without
    refusing one.
    A retry with the same Idempotency-Key answers the endpoint again, without its secret.

    Args:
        org (str):
        endpoint (str):
        idempotency_key (None | str | Unset):
        body (WebhookEndpointSecretRotate): Rotating an endpoint's signing secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WebhookEndpointCreated
    """

    return (
        await asyncio_detailed(
            org=org,
            endpoint=endpoint,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
