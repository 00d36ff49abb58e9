import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.page_audit_event_view import PageAuditEventView
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org: str,
    *,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    actor: str | Unset = UNSET,
    action: str | Unset = UNSET,
    outcome: str | Unset = UNSET,
    resource: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["page_token"] = page_token

    params["actor"] = actor

    params["action"] = action

    params["outcome"] = outcome

    params["resource"] = resource

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/orgs/{org}/audit-events".format(
            org=quote(str(org), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PageAuditEventView | Problem | None:
    if response.status_code == 200:
        response_200 = PageAuditEventView.from_dict(response.json())

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
) -> Response[PageAuditEventView | Problem]:
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
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    actor: str | Unset = UNSET,
    action: str | Unset = UNSET,
    outcome: str | Unset = UNSET,
    resource: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
) -> Response[PageAuditEventView | Problem]:
    """List the organization's audit events, oldest first, optionally filtered
    by actor, action, outcome, resource and time.

    Args:
        org (str):
        limit (int | Unset):
        page_token (str | Unset):
        actor (str | Unset):
        action (str | Unset):
        outcome (str | Unset):
        resource (str | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageAuditEventView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        limit=limit,
        page_token=page_token,
        actor=actor,
        action=action,
        outcome=outcome,
        resource=resource,
        since=since,
        until=until,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    actor: str | Unset = UNSET,
    action: str | Unset = UNSET,
    outcome: str | Unset = UNSET,
    resource: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
) -> PageAuditEventView | Problem | None:
    """List the organization's audit events, oldest first, optionally filtered
    by actor, action, outcome, resource and time.

    Args:
        org (str):
        limit (int | Unset):
        page_token (str | Unset):
        actor (str | Unset):
        action (str | Unset):
        outcome (str | Unset):
        resource (str | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageAuditEventView | Problem
    """

    return sync_detailed(
        org=org,
        client=client,
        limit=limit,
        page_token=page_token,
        actor=actor,
        action=action,
        outcome=outcome,
        resource=resource,
        since=since,
        until=until,
    ).parsed


async def asyncio_detailed(
    org: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    actor: str | Unset = UNSET,
    action: str | Unset = UNSET,
    outcome: str | Unset = UNSET,
    resource: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
) -> Response[PageAuditEventView | Problem]:
    """List the organization's audit events, oldest first, optionally filtered
    by actor, action, outcome, resource and time.

    Args:
        org (str):
        limit (int | Unset):
        page_token (str | Unset):
        actor (str | Unset):
        action (str | Unset):
        outcome (str | Unset):
        resource (str | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageAuditEventView | Problem]
    """

    kwargs = _get_kwargs(
        org=org,
        limit=limit,
        page_token=page_token,
        actor=actor,
        action=action,
        outcome=outcome,
        resource=resource,
        since=since,
        until=until,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org: str,
    *,
    client: AuthenticatedClient,
    limit: int | Unset = UNSET,
    page_token: str | Unset = UNSET,
    actor: str | Unset = UNSET,
    action: str | Unset = UNSET,
    outcome: str | Unset = UNSET,
    resource: str | Unset = UNSET,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
) -> PageAuditEventView | Problem | None:
    """List the organization's audit events, oldest first, optionally filtered
    by actor, action, outcome, resource and time.

    Args:
        org (str):
        limit (int | Unset):
        page_token (str | Unset):
        actor (str | Unset):
        action (str | Unset):
        outcome (str | Unset):
        resource (str | Unset):
        since (datetime.datetime | Unset):
        until (datetime.datetime | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageAuditEventView | Problem
    """

    return (
        await asyncio_detailed(
            org=org,
            client=client,
            limit=limit,
            page_token=page_token,
            actor=actor,
            action=action,
            outcome=outcome,
            resource=resource,
            since=since,
            until=until,
        )
    ).parsed
