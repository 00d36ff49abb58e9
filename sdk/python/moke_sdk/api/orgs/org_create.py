from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.org_create import OrgCreate
from ...models.org_view import OrgView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: OrgCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/orgs",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> OrgView | Problem | None:
    if response.status_code == 201:
        response_201 = OrgView.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[OrgView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: OrgCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[OrgView | Problem]:
    """Make another organization, owned by the person asking: at most 10 owned
    at once and 10 made in 30 days. Only a person may, signed in or with a
    token neither limited nor expiring. A name any organization has or had
    is taken. The credential asking stays where it acts: to act in the new
    organization, sign in to it, or refresh the session naming it.

    Args:
        idempotency_key (None | str | Unset):
        body (OrgCreate): A new organization. The person asking becomes its only owner; a person
            owns at most 10.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgView | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: OrgCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> OrgView | Problem | None:
    """Make another organization, owned by the person asking: at most 10 owned
    at once and 10 made in 30 days. Only a person may, signed in or with a
    token neither limited nor expiring. A name any organization has or had
    is taken. The credential asking stays where it acts: to act in the new
    organization, sign in to it, or refresh the session naming it.

    Args:
        idempotency_key (None | str | Unset):
        body (OrgCreate): A new organization. The person asking becomes its only owner; a person
            owns at most 10.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgView | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: OrgCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[OrgView | Problem]:
    """Make another organization, owned by the person asking: at most 10 owned
    at once and 10 made in 30 days. Only a person may, signed in or with a
    token neither limited nor expiring. A name any organization has or had
    is taken. The credential asking stays where it acts: to act in the new
    organization, sign in to it, or refresh the session naming it.

    Args:
        idempotency_key (None | str | Unset):
        body (OrgCreate): A new organization. The person asking becomes its only owner; a person
            owns at most 10.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgView | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: OrgCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> OrgView | Problem | None:
    """Make another organization, owned by the person asking: at most 10 owned
    at once and 10 made in 30 days. Only a person may, signed in or with a
    token neither limited nor expiring. A name any organization has or had
    is taken. The credential asking stays where it acts: to act in the new
    organization, sign in to it, or refresh the session naming it.

    Args:
        idempotency_key (None | str | Unset):
        body (OrgCreate): A new organization. The person asking becomes its only owner; a person
            owns at most 10.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgView | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
