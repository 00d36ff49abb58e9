from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.org_update import OrgUpdate
from ...models.org_view import OrgView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    *,
    body: OrgUpdate,
    if_match: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_match, Unset):
        headers["If-Match"] = if_match

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/orgs/{org}".format(
            org=quote(str(org), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> OrgView | Problem | None:
    if response.status_code == 200:
        response_200 = OrgView.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[OrgView | Problem]:
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
    body: OrgUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[OrgView | Problem]:
    """Rename or relabel an organization (owners). A new name must be one no
    organization has or had; the old one stays this organization's, so links
    that named it lead nowhere else.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgUpdate): Changes to an organization (owners); what is absent stays as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        body=body,
        if_match=if_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org: str,
    *,
    client: AuthenticatedClient,
    body: OrgUpdate,
    if_match: None | str | Unset = UNSET,
) -> OrgView | Problem | None:
    """Rename or relabel an organization (owners). A new name must be one no
    organization has or had; the old one stays this organization's, so links
    that named it lead nowhere else.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgUpdate): Changes to an organization (owners); what is absent stays as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgView | Problem
    """

    return sync_detailed(
        org=org,
        client=client,
        body=body,
        if_match=if_match,
    ).parsed


async def asyncio_detailed(
    org: str,
    *,
    client: AuthenticatedClient,
    body: OrgUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[OrgView | Problem]:
    """Rename or relabel an organization (owners). A new name must be one no
    organization has or had; the old one stays this organization's, so links
    that named it lead nowhere else.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgUpdate): Changes to an organization (owners); what is absent stays as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        body=body,
        if_match=if_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    *,
    client: AuthenticatedClient,
    body: OrgUpdate,
    if_match: None | str | Unset = UNSET,
) -> OrgView | Problem | None:
    """Rename or relabel an organization (owners). A new name must be one no
    organization has or had; the old one stays this organization's, so links
    that named it lead nowhere else.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgUpdate): Changes to an organization (owners); what is absent stays as it is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgView | Problem
    """

    return (
        await asyncio_detailed(
            org=org,
            client=client,
            body=body,
            if_match=if_match,
        )
    ).parsed
