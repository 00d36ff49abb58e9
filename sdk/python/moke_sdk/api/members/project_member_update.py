from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.project_member_set import ProjectMemberSet
from ...models.project_member_view import ProjectMemberView
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    principal: str,
    *,
    body: ProjectMemberSet,
    if_match: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_match, Unset):
        headers["If-Match"] = if_match

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/projects/{project}/members/{principal}".format(
            project=quote(str(project), safe=""),
            principal=quote(str(principal), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ProjectMemberView | None:
    if response.status_code == 200:
        response_200 = ProjectMemberView.from_dict(response.json())

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
) -> Response[Problem | ProjectMemberView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project: str,
    principal: str,
    *,
    client: AuthenticatedClient,
    body: ProjectMemberSet,
    if_match: None | str | Unset = UNSET,
) -> Response[Problem | ProjectMemberView]:
    """Give a member or service account a project role (`admin`, `developer`, `viewer`).

    Args:
        project (str):
        principal (str):
        if_match (None | str | Unset):
        body (ProjectMemberSet):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProjectMemberView]
    """

    kwargs = _get_kwargs(
        project=project,
        principal=principal,
        body=body,
        if_match=if_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    principal: str,
    *,
    client: AuthenticatedClient,
    body: ProjectMemberSet,
    if_match: None | str | Unset = UNSET,
) -> Problem | ProjectMemberView | None:
    """Give a member or service account a project role (`admin`, `developer`, `viewer`).

    Args:
        project (str):
        principal (str):
        if_match (None | str | Unset):
        body (ProjectMemberSet):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProjectMemberView
    """

    return sync_detailed(
        project=project,
        principal=principal,
        client=client,
        body=body,
        if_match=if_match,
    ).parsed


async def asyncio_detailed(
    project: str,
    principal: str,
    *,
    client: AuthenticatedClient,
    body: ProjectMemberSet,
    if_match: None | str | Unset = UNSET,
) -> Response[Problem | ProjectMemberView]:
    """Give a member or service account a project role (`admin`, `developer`, `viewer`).

    Args:
        project (str):
        principal (str):
        if_match (None | str | Unset):
        body (ProjectMemberSet):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ProjectMemberView]
    """

    kwargs = _get_kwargs(
        project=project,
        principal=principal,
        body=body,
        if_match=if_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    principal: str,
    *,
    client: AuthenticatedClient,
    body: ProjectMemberSet,
    if_match: None | str | Unset = UNSET,
) -> Problem | ProjectMemberView | None:
    """Give a member or service account a project role (`admin`, `developer`, `viewer`).

    Args:
        project (str):
        principal (str):
        if_match (None | str | Unset):
        body (ProjectMemberSet):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ProjectMemberView
    """

    return (
        await asyncio_detailed(
            project=project,
            principal=principal,
            client=client,
            body=body,
            if_match=if_match,
        )
    ).parsed
