/**
 * The Moke API from TypeScript.
 *
 * Every operation of `openapi/moke.json` is a function (`projectCreate`,
 * `clusterList`, …) generated into `./generated` by `@hey-api/openapi-ts`
 * (`cargo xtask generate`); each takes `{ client, path, query, body, headers }`
 * and resolves to `{ data, request, response }`, or throws a {@link MokeError}.
 * This file adds what a generator cannot know:
 *
 * - {@link createMokeClient}: a client with a bearer credential;
 * - every `POST` carries an `Idempotency-Key` (one is made unless given), so
 *   retrying it is safe;
 * - answers 429 and 503 are retried, honouring `Retry-After`;
 * - errors are thrown as {@link MokeError}, carrying the RFC 9457 problem;
 * - {@link paginate} / {@link pages} walk every page of a list;
 * - {@link waitForOperation} waits for long work to finish;
 * - `createMokeClient({ …, dryRun: true })` makes every mutation a dry run
 *   (`?dry_run=true`), whose answer {@link planOf} reads.
 */

import { type Client, createClient } from './generated/client/index.js';
import { operationView } from './generated/sdk.gen.js';
import type { DryRunView, FieldErrorDoc, OperationView, Problem } from './generated/types.gen.js';

export * from './generated/index.js';
export type { Client } from './generated/client/index.js';

/** How a client is made. */
export interface MokeClientOptions {
  /** The API's address, e.g. `https://api.moke.example`. */
  baseUrl: string;
  /**
   * An API token (`moke_…`) or an access token from `sessionCreate`, or a
   * function giving one (called per request, e.g. to refresh). Without one,
   * only the public operations (sign-in, sign-up, catalogs) answer.
   */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  /** Attempts per request while the server answers 429 or 503 (default 4). */
  attempts?: number;
  /** The longest pause between attempts in milliseconds, whatever `Retry-After` says (default 30 000). */
  maxRetryWaitMs?: number;
  /** The fetch to send with (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /**
   * Every mutation is a dry run (`?dry_run=true`): checked as the real call
   * (a refusal throws as usual), answered with what would change
   * ({@link planOf}), and nothing is written.
   */
  dryRun?: boolean;
}

/** An answer of the API that is not a success: the problem it carries (RFC 9457). */
export class MokeError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem document (`application/problem+json`). */
  readonly problem: Problem;
  /** The answer, when there was one. */
  readonly response: Response | undefined;

  constructor(problem: Problem, response?: Response) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = 'MokeError';
    this.status = problem.status;
    this.problem = problem;
    this.response = response;
  }

  /** Stable machine-readable code, e.g. `invalid_request`, `not_found`. */
  get code(): string {
    return this.problem.code;
  }

  /** Every bad field, for `invalid_request`. */
  get errors(): FieldErrorDoc[] {
    return this.problem.errors ?? [];
  }

  /** The request's id: quote it when you ask for help. */
  get requestId(): string | undefined {
    return this.problem.request_id ?? undefined;
  }
}

/** A client for the generated functions: pass it as `{ client }`. */
export function createMokeClient(options: MokeClientOptions): Client {
  const client = createClient({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retrying(options.fetch ?? globalThis.fetch, options.attempts ?? 4, options.maxRetryWaitMs ?? 30_000),
    throwOnError: true,
  });
  const token = options.token;
  client.interceptors.request.use(async (request) => {
    if (token !== undefined && !request.headers.has('Authorization')) {
      const value = typeof token === 'function' ? await token() : token;
      if (value) request.headers.set('Authorization', `Bearer ${value}`);
    }
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', crypto.randomUUID());
    }
    if (options.dryRun && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(request.method)) {
      const url = new URL(request.url);
      url.searchParams.set('dry_run', 'true');
      const body = request.body === null ? undefined : await request.arrayBuffer();
      return new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal });
    }
    return request;
  });
  client.interceptors.error.use((error, response) => toMokeError(error, response));
  return client;
}

/**
 * The plan a dry-run client's mutation answered (its `data` is typed as the
 * operation's own answer, which a dry run does not give):
 * `planOf(await clusterDelete({ client: planning, path: { project, cluster } }))`.
 */
export function planOf(answer: { data?: unknown; response: Response }): DryRunView {
  if (answer.response.headers.get('moke-dry-run') !== 'true') {
    throw new Error('the answer is not a dry run’s: make the client with `dryRun: true`');
  }
  return answer.data as DryRunView;
}

/** A client from `MOKE_HOST` and `MOKE_TOKEN` (what CI sets). */
export function createMokeClientFromEnv(env: Record<string, string | undefined>): Client {
  const baseUrl = env['MOKE_HOST'];
  if (!baseUrl) throw new Error('MOKE_HOST is not set');
  return createMokeClient({ baseUrl, token: env['MOKE_TOKEN'] });
}

function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['status'] === 'number' && typeof v['code'] === 'string';
}

/** What the fetch client threw, as a {@link MokeError} when the server answered. */
function toMokeError(error: unknown, response: Response | undefined): unknown {
  if (error instanceof MokeError || response === undefined) return error;
  if (isProblem(error)) return new MokeError(error, response);
  // An answer without a problem document (a proxy's, say): say what we know.
  const detail = typeof error === 'string' && error ? error : response.statusText;
  return new MokeError(
    { type: 'about:blank', title: response.statusText, status: response.status, detail, code: 'http_error' },
    response,
  );
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `Retry-After` in milliseconds (the server sends seconds). */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (!value || !/^\d+$/.test(value)) return undefined;
  return Number(value) * 1000;
}

/** A fetch that sends again after `Retry-After` (or a growing pause) while the answer is 429 or 503. */
function retrying(inner: typeof fetch, attempts: number, maxWaitMs: number): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    let pause = 500;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      const response = await inner(last ? request : request.clone());
      if (last || (response.status !== 429 && response.status !== 503)) return response;
      await response.body?.cancel();
      await sleep(Math.min(retryAfterMs(response) ?? pause, maxWaitMs));
      pause = Math.min(pause * 2, maxWaitMs);
    }
  };
}

/** One page of a list: its items, and the token of the next page (`null` on the last). */
export interface Page<T> {
  items: T[];
  next_page?: string | null;
}

/** The options every list takes (`limit`, `page_token`). */
export interface ListOptions {
  query?: { limit?: number; page_token?: string };
}

/**
 * Every page of a list, first to last:
 * `for await (const page of pages(projectList, { client, path: { org } }))`.
 */
export async function* pages<O extends object, T>(
  list: (options: O) => Promise<{ data: Page<T> }>,
  options: O,
): AsyncGenerator<Page<T>, void, undefined> {
  // `O extends ListOptions` would refuse options without `query` (a weak type).
  const given = (options as ListOptions).query;
  let pageToken: string | undefined = given?.page_token;
  for (;;) {
    const query = { ...given, ...(pageToken ? { page_token: pageToken } : {}) };
    const { data } = await list({ ...options, query });
    yield data;
    if (!data.next_page) return;
    pageToken = data.next_page;
  }
}

/**
 * Every item of a list, across its pages:
 * `for await (const project of paginate(projectList, { client, path: { org }, query: { limit: 50 } }))`.
 */
export async function* paginate<O extends object, T>(
  list: (options: O) => Promise<{ data: Page<T> }>,
  options: O,
): AsyncGenerator<T, void, undefined> {
  for await (const page of pages(list, options)) {
    yield* page.items;
  }
}

/**
 * Waits until the Operation `id` has finished (`succeeded` or `failed`; the
 * server holds each poll up to a minute) or `timeoutMs` has passed, and
 * returns it as last seen.
 */
export async function waitForOperation(
  client: Client,
  id: string,
  { timeoutMs = 600_000 }: { timeoutMs?: number } = {},
): Promise<OperationView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = Math.min(60, Math.max(1, Math.ceil((deadline - Date.now()) / 1000)));
    const { data } = await operationView({ client, path: { operation: id }, query: { wait: `${left}s` } });
    if (data.status === 'succeeded' || data.status === 'failed' || Date.now() >= deadline) return data;
  }
}
