from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.deploy_hook_created import DeployHookCreated
from ...models.deploy_hook_secret_rotate import DeployHookSecretRotate
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    hook: str,
    *,
    body: DeployHookSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/projects/{project}/hooks/{hook}/rotate-secret".format(
            project=quote(str(project), safe=""),
            hook=quote(str(hook), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeployHookCreated | Problem | None:
    if response.status_code == 200:
        response_200 = DeployHookCreated.from_dict(response.json())

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
) -> Response[DeployHookCreated | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project: str,
    hook: str,
    *,
    client: AuthenticatedClient,
    body: DeployHookSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[DeployHookCreated | Problem]:
    """Rotate a deploy webhook's secret. The answer holds the new secret, shown
    only once; the previous one keeps being accepted for
    `previous_secret_valid_seconds` (24 h by default; 0 revokes it now, and
    within a minute on every gateway process), so
    CI can switch over without a refused delivery.

    Args:
        project (str):
        hook (str):
        idempotency_key (None | str | Unset):
        body (DeployHookSecretRotate): Rotating a hook's secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeployHookCreated | Problem]
    """

    kwargs = _get_kwargs(
        project=project,
        hook=hook,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    hook: str,
    *,
    client: AuthenticatedClient,
    body: DeployHookSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> DeployHookCreated | Problem | None:
    """Rotate a deploy webhook's secret. The answer holds the new secret, shown
    only once; the previous one keeps being accepted for
    `previous_secret_valid_seconds` (24 h by default; 0 revokes it now, and
    within a minute on every gateway process), so
    CI can switch over without a refused delivery.

    Args:
        project (str):
        hook (str):
        idempotency_key (None | str | Unset):
        body (DeployHookSecretRotate): Rotating a hook's secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeployHookCreated | Problem
    """

    return sync_detailed(
        project=project,
        hook=hook,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    project: str,
    hook: str,
    *,
    client: AuthenticatedClient,
    body: DeployHookSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[DeployHookCreated | Problem]:
    """Rotate a deploy webhook's secret. The answer holds the new secret, shown
    only once; the previous one keeps being accepted for
    `previous_secret_valid_seconds` (24 h by default; 0 revokes it now, and
    within a minute on every gateway process), so
    CI can switch over without a refused delivery.

    Args:
        project (str):
        hook (str):
        idempotency_key (None | str | Unset):
        body (DeployHookSecretRotate): Rotating a hook's secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeployHookCreated | Problem]
    """

    kwargs = _get_kwargs(
        project=project,
        hook=hook,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    hook: str,
    *,
    client: AuthenticatedClient,
    body: DeployHookSecretRotate,
    idempotency_key: None | str | Unset = UNSET,
) -> DeployHookCreated | Problem | None:
    """Rotate a deploy webhook's secret. The answer holds the new secret, shown
    only once; the previous one keeps being accepted for
    `previous_secret_valid_seconds` (24 h by default; 0 revokes it now, and
    within a minute on every gateway process), so
    CI can switch over without a refused delivery.

    Args:
        project (str):
        hook (str):
        idempotency_key (None | str | Unset):
        body (DeployHookSecretRotate): Rotating a hook's secret.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeployHookCreated | Problem
    """

    return (
        await asyncio_detailed(
            project=project,
            hook=hook,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
