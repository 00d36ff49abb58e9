from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.device_authorization_create import DeviceAuthorizationCreate
from ...models.device_authorization_created import DeviceAuthorizationCreated
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    *,
    body: DeviceAuthorizationCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/device/auth",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeviceAuthorizationCreated | Problem | None:
    if response.status_code == 200:
        response_200 = DeviceAuthorizationCreated.from_dict(response.json())

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
) -> Response[DeviceAuthorizationCreated | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeviceAuthorizationCreate,
) -> Response[DeviceAuthorizationCreated | Problem]:
    """Start signing a device in (RFC 8628 §3.1): answers a device code to
    poll `POST /v1/device/token` with, and a user code for the person to
    confirm at `verification_uri` (or with `POST /v1/device/confirm`). Both
    expire in 10 minutes. Needs no credential; limited per address like
    sign-in. Each call starts a new sign-in (no `Idempotency-Key`: an
    abandoned one just expires).

    Args:
        body (DeviceAuthorizationCreate): `POST /v1/device/auth`: a device (the `moke` CLI) asks
            to be signed in.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeviceAuthorizationCreated | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: DeviceAuthorizationCreate,
) -> DeviceAuthorizationCreated | Problem | None:
    """Start signing a device in (RFC 8628 §3.1): answers a device code to
    poll `POST /v1/device/token` with, and a user code for the person to
    confirm at `verification_uri` (or with `POST /v1/device/confirm`). Both
    expire in 10 minutes. Needs no credential; limited per address like
    sign-in. Each call starts a new sign-in (no `Idempotency-Key`: an
    abandoned one just expires).

    Args:
        body (DeviceAuthorizationCreate): `POST /v1/device/auth`: a device (the `moke` CLI) asks
            to be signed in.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeviceAuthorizationCreated | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeviceAuthorizationCreate,
) -> Response[DeviceAuthorizationCreated | Problem]:
    """Start signing a device in (RFC 8628 §3.1): answers a device code to
    poll `POST /v1/device/token` with, and a user code for the person to
    confirm at `verification_uri` (or with `POST /v1/device/confirm`). Both
    expire in 10 minutes. Needs no credential; limited per address like
    sign-in. Each call starts a new sign-in (no `Idempotency-Key`: an
    abandoned one just expires).

    Args:
        body (DeviceAuthorizationCreate): `POST /v1/device/auth`: a device (the `moke` CLI) asks
            to be signed in.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeviceAuthorizationCreated | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: DeviceAuthorizationCreate,
) -> DeviceAuthorizationCreated | Problem | None:
    """Start signing a device in (RFC 8628 §3.1): answers a device code to
    poll `POST /v1/device/token` with, and a user code for the person to
    confirm at `verification_uri` (or with `POST /v1/device/confirm`). Both
    expire in 10 minutes. Needs no credential; limited per address like
    sign-in. Each call starts a new sign-in (no `Idempotency-Key`: an
    abandoned one just expires).

    Args:
        body (DeviceAuthorizationCreate): `POST /v1/device/auth`: a device (the `moke` CLI) asks
            to be signed in.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeviceAuthorizationCreated | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
