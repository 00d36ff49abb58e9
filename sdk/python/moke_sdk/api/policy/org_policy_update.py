from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.org_policy_update import OrgPolicyUpdate
from ...models.org_policy_view import OrgPolicyView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    *,
    body: OrgPolicyUpdate,
    if_match: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_match, Unset):
        headers["If-Match"] = if_match

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/orgs/{org}/policy".format(
            org=quote(str(org), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> OrgPolicyView | Problem | None:
    if response.status_code == 200:
        response_200 = OrgPolicyView.from_dict(response.json())

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
) -> Response[OrgPolicyView | Problem]:
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
    body: OrgPolicyUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[OrgPolicyView | Problem]:
    """Write the next version of the organization's change policy (owners who
    are people; a service account is refused, 403 `not_a_person`):
    which changes wait for approval and who approves them, how many
    disruptive operations run at once, and what may be deployed. The body
    is the whole version: a part left out takes its defaults (no rule), so
    send the parts to keep as `GET` shows them, with its ETag as
    `If-Match`. It takes effect at `effective_at` (now by default);
    versions are never changed, and every change's audit event names the
    version that allowed it.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgPolicyUpdate): A new version of the organization's policy. It is in force from
            `effective_at` until a later version's; versions are never changed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgPolicyView | Problem]
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
    body: OrgPolicyUpdate,
    if_match: None | str | Unset = UNSET,
) -> OrgPolicyView | Problem | None:
    """Write the next version of the organization's change policy (owners who
    are people; a service account is refused, 403 `not_a_person`):
    which changes wait for approval and who approves them, how many
    disruptive operations run at once, and what may be deployed. The body
    is the whole version: a part left out takes its defaults (no rule), so
    send the parts to keep as `GET` shows them, with its ETag as
    `If-Match`. It takes effect at `effective_at` (now by default);
    versions are never changed, and every change's audit event names the
    version that allowed it.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgPolicyUpdate): A new version of the organization's policy. It is in force from
            `effective_at` until a later version's; versions are never changed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgPolicyView | Problem
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
    body: OrgPolicyUpdate,
    if_match: None | str | Unset = UNSET,
) -> Response[OrgPolicyView | Problem]:
    """Write the next version of the organization's change policy (owners who
    are people; a service account is refused, 403 `not_a_person`):
    which changes wait for approval and who approves them, how many
    disruptive operations run at once, and what may be deployed. The body
    is the whole version: a part left out takes its defaults (no rule), so
    send the parts to keep as `GET` shows them, with its ETag as
    `If-Match`. It takes effect at `effective_at` (now by default);
    versions are never changed, and every change's audit event names the
    version that allowed it.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgPolicyUpdate): A new version of the organization's policy. It is in force from
            `effective_at` until a later version's; versions are never changed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[OrgPolicyView | Problem]
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
    body: OrgPolicyUpdate,
    if_match: None | str | Unset = UNSET,
) -> OrgPolicyView | Problem | None:
    """Write the next version of the organization's change policy (owners who
    are people; a service account is refused, 403 `not_a_person`):
    which changes wait for approval and who approves them, how many
    disruptive operations run at once, and what may be deployed. The body
    is the whole version: a part left out takes its defaults (no rule), so
    send the parts to keep as `GET` shows them, with its ETag as
    `If-Match`. It takes effect at `effective_at` (now by default);
    versions are never changed, and every change's audit event names the
    version that allowed it.

    Args:
        org (str):
        if_match (None | str | Unset):
        body (OrgPolicyUpdate): A new version of the organization's policy. It is in force from
            `effective_at` until a later version's; versions are never changed.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        OrgPolicyView | Problem
    """

    return (
        await asyncio_detailed(
            org=org,
            client=client,
            body=body,
            if_match=if_match,
        )
    ).parsed
