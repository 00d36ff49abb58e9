"""The scenario every Moke SDK runs against a live gateway (see
api/tests/http/sdk_scripts.rs): sign in, project, cluster, node pool,
kubeconfig, deployment from a manifest, 250 projects paged, a validation
error read through the typed error, an idempotent retry; then the same
start with the async client.

    MOKE_HOST=… MOKE_EMAIL=… MOKE_PASSWORD=… python scenario.py
"""

from __future__ import annotations

import asyncio
import os
import re
import time

import httpx

from moke_sdk.api.auth import session_create
from moke_sdk.api.clusters import cluster_create, cluster_delete, cluster_kubeconfig_view, cluster_view
from moke_sdk.api.node_pools import node_pool_create
from moke_sdk.api.projects import project_create, project_list
from moke_sdk.api.workloads import deployment_create
from moke_sdk.extras import (
    MokeError,
    anonymous,
    apaginate,
    connect,
    ok,
    pages,
    paginate,
    plan_of,
    wait_operation,
    wait_operation_async,
)
from moke_sdk.models import (
    ClusterCreate,
    ClusterSpecInput,
    DeploymentCreate,
    DeploymentCreateManifestType0,
    LoginRequest,
    NodePoolCreate,
    NodePoolSpecInput,
    OperationStatus,
    ProjectCreate,
)

HOST = os.environ["MOKE_HOST"]
MINUTES = 60.0

# 1. Sign in: an access token, and the organization it acts in.
with anonymous(HOST) as public:
    session = ok(
        session_create.sync(
            client=public, body=LoginRequest(email=os.environ["MOKE_EMAIL"], password=os.environ["MOKE_PASSWORD"])
        )
    )
client = connect(HOST, session.access_token)
org = session.organization

# 2. A project.
project = ok(project_create.sync(org, client=client, body=ProjectCreate(name="shop")))
assert project.name == "shop", project

# 3. A cluster, waited for.
created = ok(
    cluster_create.sync(
        project.id, client=client, body=ClusterCreate(name="prod", spec=ClusterSpecInput(region="eu-central-1"))
    )
)
operation = wait_operation(client, created.id, timeout=2 * MINUTES)
assert operation.status == OperationStatus.SUCCEEDED, operation

# A dry run of the cluster's delete: what would go, and nothing gone.
with connect(HOST, session.access_token, dry_run=True) as planning:
    plan = plan_of(cluster_delete.sync_detailed(project.id, "prod", client=planning))
assert plan.operations[0].kind == "cluster_delete", plan
still = ok(cluster_view.sync(project.id, "prod", client=client))
assert not still.deletion_requested_at, still

# 4. A node pool.
pool = ok(
    node_pool_create.sync(
        project.id,
        "prod",
        client=client,
        body=NodePoolCreate(name="workers", spec=NodePoolSpecInput(machine_type="bm.small", count=2)),
    )
)
operation = wait_operation(client, pool.id, timeout=2 * MINUTES)
assert operation.status == OperationStatus.SUCCEEDED, operation

# 5. A kubeconfig kubectl can read.
kubeconfig = ok(cluster_kubeconfig_view.sync(project.id, "prod", client=client))
assert "certificate-authority-data" in kubeconfig.kubeconfig, kubeconfig.kubeconfig

# 6. A deployment from a Kubernetes manifest.
manifest = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:1.0.0"}]},
        },
    },
}
rollout = ok(
    deployment_create.sync(
        project.id,
        "prod",
        "default",
        client=client,
        body=DeploymentCreate(name="web", manifest=DeploymentCreateManifestType0.from_dict(manifest)),
    )
)
operation = wait_operation(client, rollout.id, timeout=2 * MINUTES)
assert operation.status == OperationStatus.SUCCEEDED, operation

# 7. 250 projects, paged by the SDK (50 a page).
for n in range(1, 250):
    project_create.sync(org, client=client, body=ProjectCreate(name=f"p{n:03}"))
names = [p.name for p in paginate(project_list.sync, org, client=client, limit=50)]
assert len(names) == 250, len(names)
assert len(set(names)) == 250, "every project once"
assert [len(page.items) for page in pages(project_list.sync, org, client=client, limit=50)] == [50] * 5

# 8. A validation error names its field.
try:
    cluster_create.sync(
        project.id, client=client, body=ClusterCreate(name="nowhere", spec=ClusterSpecInput(region="mars-north-1"))
    )
    raise AssertionError("a cluster in mars-north-1 was accepted")
except MokeError as error:
    assert error.status == 400, error
    assert error.code == error.problem.code
    assert [e.field for e in error.errors] == ["spec.region"], error.problem.to_dict()

# 9. A retry with the same idempotency key is the same create.
first = ok(
    project_create.sync(org, client=client, body=ProjectCreate(name="staging"), idempotency_key="create-staging-1")
)
again = ok(
    project_create.sync(org, client=client, body=ProjectCreate(name="staging"), idempotency_key="create-staging-1")
)
assert first.id == again.id, "the retry answered the first create"


# 10. A 429 is sent again after its Retry-After, and POSTs carry a key.
class Flaky(httpx.BaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.refusals = 0
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.keys.append(request.headers.get("idempotency-key", ""))
        self.refusals += 1
        if self.refusals == 1:
            return httpx.Response(429, headers={"Retry-After": "1"}, json={})
        return self.inner.handle_request(request)


flaky = Flaky()
with connect(HOST, session.access_token, transport=flaky) as retrying:
    started = time.monotonic()
    made = ok(project_create.sync(org, client=retrying, body=ProjectCreate(name="flaky")))
    assert time.monotonic() - started >= 1.0, "the retry waited for Retry-After"
    assert flaky.refusals == 2, "one refusal, one retry"
    assert len(flaky.keys) == 2 and flaky.keys[0] == flaky.keys[1], flaky.keys
    assert re.fullmatch(r"[0-9a-f-]{36}", flaky.keys[0]), flaky.keys


# 11. The async client: the same pages, and an operation waited for.
async def main() -> None:
    names = [p.name async for p in apaginate(project_list.asyncio, org, client=client, limit=100)]
    assert len(names) == 252, len(names)  # + staging and flaky
    operation = await wait_operation_async(client, rollout.id, timeout=MINUTES)
    assert operation.status == OperationStatus.SUCCEEDED, operation


asyncio.run(main())
client.get_httpx_client().close()
print("python scenario: ok")
