from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.trust_policy_create import TrustPolicyCreate
from ...models.trust_policy_view import TrustPolicyView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    service_account: str,
    *,
    body: TrustPolicyCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs/{org}/service-accounts/{service_account}/trust-policies".format(
            org=quote(str(org), safe=""),
            service_account=quote(str(service_account), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | TrustPolicyView | None:
    if response.status_code == 201:
        response_201 = TrustPolicyView.from_dict(response.json())

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
) -> Response[Problem | TrustPolicyView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org: str,
    service_account: str,
    *,
    client: AuthenticatedClient,
    body: TrustPolicyCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | TrustPolicyView]:
    """Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.

    Args:
        org (str):
        service_account (str):
        idempotency_key (None | str | Unset):
        body (TrustPolicyCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TrustPolicyView]
    """

    kwargs = _get_kwargs(
        org=org,
        service_account=service_account,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org: str,
    service_account: str,
    *,
    client: AuthenticatedClient,
    body: TrustPolicyCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | TrustPolicyView | None:
    """Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.

    Args:
        org (str):
        service_account (str):
        idempotency_key (None | str | Unset):
        body (TrustPolicyCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TrustPolicyView
    """

    return sync_detailed(
        org=org,
        service_account=service_account,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    org: str,
    service_account: str,
    *,
    client: AuthenticatedClient,
    body: TrustPolicyCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[Problem | TrustPolicyView]:
    """Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.

    Args:
        org (str):
        service_account (str):
        idempotency_key (None | str | Unset):
        body (TrustPolicyCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TrustPolicyView]
    """

    kwargs = _get_kwargs(
        org=org,
        service_account=service_account,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    service_account: str,
    *,
    client: AuthenticatedClient,
    body: TrustPolicyCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Problem | TrustPolicyView | None:
    """Let CI jobs whose ID tokens match (issuer, audience, claims) act as the service account.

    Args:
        org (str):
        service_account (str):
        idempotency_key (None | str | Unset):
        body (TrustPolicyCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TrustPolicyView
    """

    return (
        await asyncio_detailed(
            org=org,
            service_account=service_account,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
