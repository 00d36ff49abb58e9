from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.spec_diff import SpecDiff
from ...types import UNSET, Response, Unset


def _get_kwargs(
    project: str,
    cluster: str,
    generation: int,
    *,
    from_: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["from"] = from_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/projects/{project}/clusters/{cluster}/revisions/{generation}/diff".format(
            project=quote(str(project), safe=""),
            cluster=quote(str(cluster), safe=""),
            generation=quote(str(generation), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SpecDiff | None:
    if response.status_code == 200:
        response_200 = SpecDiff.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SpecDiff]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    project: str,
    cluster: str,
    generation: int,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
) -> Response[Problem | SpecDiff]:
    """What changed in the cluster's spec at a generation: each value that
    differs from the revision before (or from `from`), by JSON Pointer.

    Args:
        project (str):
        cluster (str):
        generation (int):
        from_ (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SpecDiff]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        generation=generation,
        from_=from_,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    project: str,
    cluster: str,
    generation: int,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
) -> Problem | SpecDiff | None:
    """What changed in the cluster's spec at a generation: each value that
    differs from the revision before (or from `from`), by JSON Pointer.

    Args:
        project (str):
        cluster (str):
        generation (int):
        from_ (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SpecDiff
    """

    return sync_detailed(
        project=project,
        cluster=cluster,
        generation=generation,
        client=client,
        from_=from_,
    ).parsed


async def asyncio_detailed(
    project: str,
    cluster: str,
    generation: int,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
) -> Response[Problem | SpecDiff]:
    """What changed in the cluster's spec at a generation: each value that
    differs from the revision before (or from `from`), by JSON Pointer.

    Args:
        project (str):
        cluster (str):
        generation (int):
        from_ (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SpecDiff]
    """

    kwargs = _get_kwargs(
        project=project,
        cluster=cluster,
        generation=generation,
        from_=from_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    project: str,
    cluster: str,
    generation: int,
    *,
    client: AuthenticatedClient,
    from_: int | Unset = UNSET,
) -> Problem | SpecDiff | None:
    """What changed in the cluster's spec at a generation: each value that
    differs from the revision before (or from `from`), by JSON Pointer.

    Args:
        project (str):
        cluster (str):
        generation (int):
        from_ (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SpecDiff
    """

    return (
        await asyncio_detailed(
            project=project,
            cluster=cluster,
            generation=generation,
            client=client,
            from_=from_,
        )
    ).parsed
