// The scenario every Moke SDK runs against a live gateway (see
// api/tests/http/sdk_scripts.rs): sign in, project, cluster, node pool,
// kubeconfig, deployment from a manifest, 250 projects paged, a validation
// error read through the typed error, an idempotent retry.
//
//   MOKE_HOST=… MOKE_EMAIL=… MOKE_PASSWORD=… node scenario.js

import assert from 'node:assert/strict';

import {
  clusterCreate,
  clusterDelete,
  clusterKubeconfigView,
  clusterView,
  createMokeClient,
  deploymentCreate,
  MokeError,
  nodePoolCreate,
  pages,
  paginate,
  planOf,
  projectCreate,
  projectList,
  sessionCreate,
  waitForOperation,
} from '../src/index.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const host = env('MOKE_HOST');
const minutes = 60_000;

// 1. Sign in: an access token, and the organization it acts in.
const anonymous = createMokeClient({ baseUrl: host });
const { data: session } = await sessionCreate({
  client: anonymous,
  body: { email: env('MOKE_EMAIL'), password: env('MOKE_PASSWORD') },
});
const client = createMokeClient({ baseUrl: host, token: session.access_token });
const org = session.organization;

// 2. A project.
const { data: project, request } = await projectCreate({ client, path: { org }, body: { name: 'shop' } });
assert.match(request.headers.get('Idempotency-Key') ?? '', /^[0-9a-f-]{36}$/, 'every POST carries a key');

// 3. A cluster, waited for.
const { data: created } = await clusterCreate({
  client,
  path: { project: project.id },
  body: { name: 'prod', spec: { region: 'eu-central-1' } },
});
let operation = await waitForOperation(client, created.id, { timeoutMs: 2 * minutes });
assert.equal(operation.status, 'succeeded', JSON.stringify(operation));

// A dry run of the cluster's delete: what would go, and nothing gone.
const planning = createMokeClient({ baseUrl: host, token: session.access_token, dryRun: true });
const plan = planOf(await clusterDelete({ client: planning, path: { project: project.id, cluster: 'prod' } }));
assert.equal(plan.operations[0]?.kind, 'cluster_delete', JSON.stringify(plan));
const { data: still } = await clusterView({ client, path: { project: project.id, cluster: 'prod' } });
assert.equal(still.deletion_requested_at ?? null, null, JSON.stringify(still));

// 4. A node pool.
const { data: pool } = await nodePoolCreate({
  client,
  path: { project: project.id, cluster: 'prod' },
  body: { name: 'workers', spec: { machine_type: 'bm.small', count: 2 } },
});
operation = await waitForOperation(client, pool.id, { timeoutMs: 2 * minutes });
assert.equal(operation.status, 'succeeded', JSON.stringify(operation));

// 5. A kubeconfig kubectl can read.
const { data: kubeconfig } = await clusterKubeconfigView({ client, path: { project: project.id, cluster: 'prod' } });
assert.ok(kubeconfig.kubeconfig.includes('certificate-authority-data'), kubeconfig.kubeconfig);

// 6. A deployment from a Kubernetes manifest.
const manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'registry.example.com/shop/web:1.0.0' }] },
    },
  },
};
const { data: rollout } = await deploymentCreate({
  client,
  path: { project: project.id, cluster: 'prod', namespace: 'default' },
  body: { name: 'web', manifest },
});
operation = await waitForOperation(client, rollout.id, { timeoutMs: 2 * minutes });
assert.equal(operation.status, 'succeeded', JSON.stringify(operation));

// 7. 250 projects, paged by the SDK (50 a page).
for (let n = 1; n < 250; n++) {
  await projectCreate({ client, path: { org }, body: { name: `p${String(n).padStart(3, '0')}` } });
}
const names: string[] = [];
for await (const p of paginate(projectList, { client, path: { org }, query: { limit: 50 } })) {
  names.push(p.name);
}
assert.equal(names.length, 250);
assert.equal(new Set(names).size, 250, 'every project once');
let pageCount = 0;
for await (const page of pages(projectList, { client, path: { org }, query: { limit: 50 } })) {
  assert.ok(page.items.length <= 50);
  pageCount++;
}
assert.equal(pageCount, 5);

// 8. A validation error names its field.
try {
  await clusterCreate({
    client,
    path: { project: project.id },
    body: { name: 'nowhere', spec: { region: 'mars-north-1' } },
  });
  assert.fail('a cluster in mars-north-1 was accepted');
} catch (error) {
  if (!(error instanceof MokeError)) throw error;
  assert.equal(error.status, 400);
  assert.equal(error.code, error.problem.code);
  assert.deepEqual(
    error.errors.map((e) => e.field),
    ['spec.region'],
    JSON.stringify(error.problem),
  );
}

// 9. A retry with the same idempotency key is the same create.
const create = () =>
  projectCreate({ client, path: { org }, headers: { 'Idempotency-Key': 'create-staging-1' }, body: { name: 'staging' } });
const first = await create();
const again = await create();
assert.equal(first.data.id, again.data.id, 'the retry answered the first create');

// 10. A 429 is sent again after its Retry-After.
let refusals = 0;
const flaky = createMokeClient({
  baseUrl: host,
  token: session.access_token,
  fetch: async (input, init) => {
    if (refusals++ === 0) return new Response('{}', { status: 429, headers: { 'Retry-After': '1' } });
    return fetch(input, init);
  },
});
const startedAt = Date.now();
const { data: viewed } = await projectList({ client: flaky, path: { org }, query: { limit: 1 } });
assert.equal(viewed.items.length, 1);
assert.equal(refusals, 2, 'one refusal, one retry');
assert.ok(Date.now() - startedAt >= 1000, 'the retry waited for Retry-After');

console.log('typescript scenario: ok');
