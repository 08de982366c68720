// The Hostplane client: openapi-fetch over the types generated from the API's own OpenAPI
// document (schema.ts, `npm run sdk:generate`), so a path, a parameter or a body field the
// server renames breaks the build of every caller instead of failing at run time.
//
// What it adds to the bare typed fetch: the Bearer token, one error type (HostplaneError) for
// every failure, retries of 429 (honouring Retry-After) and 503 with backoff, a timeout per
// attempt, paging as an async iterator, and waiting on a job with progress callbacks.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import createClient, { type Client } from 'openapi-fetch';
import { HostplaneError } from './errors.ts';
import type { paths } from './schema.ts';

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  status: number;
  delayMs: number;
  method: string;
  url: string;
}

export interface HostplaneOptions {
  /** Where the app answers, e.g. http://localhost:8080 (its PUBLIC_URL). */
  baseUrl: string;
  /** An API token, `svc_…`. */
  token: string;
  /** Where the operator mounted the second token surface (ALT_BASE_PATH): /cloud unless told. */
  cloudBasePath?: string;
  /** Each attempt's limit, from sending to the whole answer's headers: 30 s unless told. */
  timeoutMs?: number;
  /** How many times a 429 or 503 is tried again: 3 unless told; 0 turns retries off. */
  retries?: number;
  /**
   * The longest wait before a retry. A Retry-After longer than this (the deploy limit's is up
   * to an hour) is not waited out: the 429 is raised at once. 60 s unless told.
   */
  maxRetryDelayMs?: number;
  /** The first backoff when the answer names no Retry-After (doubled each time): 500 ms unless told. */
  backoffMs?: number;
  /** Called before each retry (the CLI shows it). */
  onRetry?: (info: RetryInfo) => void;
  userAgent?: string;
  /** The fetch to use (tests, proxies); the global one unless told. */
  fetch?: typeof fetch;
}

/** What the API says about a page of a list. */
export interface Pagination {
  page: number;
  per_page: number;
  total: number;
}

export interface WaitOptions {
  /** Called with the job whenever its status, progress or step changes (the first read too). */
  onProgress?: (job: Job) => void;
  /** Between two reads: 1 s unless told. */
  intervalMs?: number;
  /** Give up (HostplaneError `timeout`) after this long; no limit unless told. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
const DEFAULT_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
const RETRIED = new Set([429, 503]);

/** The wait a 429/503 asks for: Retry-After in seconds or as a date, else exponential backoff with jitter. */
export function retryDelayMs(response: Response, attempt: number, backoffMs = DEFAULT_BACKOFF_MS): number {
  const header = response.headers.get('retry-after');
  if (header !== null && header.trim() !== '') {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  const base = Math.min(backoffMs * 2 ** attempt, MAX_BACKOFF_MS);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

/**
 * The fetch under openapi-fetch: each attempt with its own timeout, 429 and 503 tried again
 * after the wait they ask for, and a failure to connect turned into a HostplaneError. The body
 * is read once so that every attempt can send it.
 */
function resilientFetch(options: HostplaneOptions, baseUrl: string): (input: Request) => Promise<Response> {
  const send = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
  const cloudFrom = `${baseUrl}/cloud/`;
  const cloudTo = `${baseUrl}${(options.cloudBasePath ?? '/cloud').replace(/\/+$/, '')}/`;
  const origin = new URL(baseUrl).origin;

  return async (request: Request) => {
    const url = request.url.startsWith(cloudFrom) ? cloudTo + request.url.slice(cloudFrom.length) : request.url;
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
      let response: Response;
      try {
        response = await send(url, { method: request.method, headers: request.headers, body, signal });
      } catch (cause) {
        if (request.signal?.aborted) throw cause;
        if (timeout.aborted) {
          throw new HostplaneError(
            {
              status: 0,
              code: 'timeout',
              message: `${origin} did not answer ${request.method} ${new URL(url).pathname} within ${timeoutMs / 1000} s`,
              request_id: null,
            },
            { cause },
          );
        }
        const reason = (cause as { cause?: { code?: string; message?: string } }).cause;
        throw new HostplaneError(
          {
            status: 0,
            code: 'unreachable',
            message: `cannot reach ${origin}: ${reason?.code ?? reason?.message ?? (cause as Error).message}`,
            request_id: null,
          },
          { cause },
        );
      }
      if (!RETRIED.has(response.status) || attempt >= retries) return response;
      const delayMs = retryDelayMs(response, attempt, options.backoffMs);
      if (delayMs > maxDelay) return response;
      await response.body?.cancel();
      options.onRetry?.({ attempt: attempt + 1, status: response.status, delayMs, method: request.method, url });
      await sleep(delayMs, undefined, request.signal ? { signal: request.signal } : {});
    }
  };
}

/** A downloaded invoice PDF. */
export interface InvoicePdf {
  bytes: Uint8Array;
  contentType: string;
}

/** The data of a success, or the failure raised as a HostplaneError. */
async function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(
  pending: Promise<R>,
): Promise<Exclude<R['data'], undefined>> {
  const { data, error, response } = await pending;
  if (error !== undefined || !response.ok) throw HostplaneError.fromResponse(response, error);
  return data as Exclude<R['data'], undefined>;
}

/** Every item of a paged list, page after page, fetched as the caller iterates. */
export async function* paginate<P extends { pagination: Pagination }, T>(
  fetchPage: (page: number) => Promise<P>,
  items: (page: P) => T[],
): AsyncGenerator<T, void, undefined> {
  for (let page = 1; ; page++) {
    const result = await fetchPage(page);
    const list = items(result);
    yield* list;
    const { per_page, total } = result.pagination;
    if (list.length === 0 || page * per_page >= total) return;
  }
}

export type PowerAction = 'shutdown' | 'reboot' | 'power_cycle';
export type ServicePowerAction = 'start' | 'stop' | 'restart' | 'kill';
export type DeployBody = NonNullable<
  paths['/cloud/v1/instances']['post']['requestBody']
>['content']['application/json'];
export type DeployRequest = Omit<DeployBody, 'idempotency_key'> & { idempotency_key?: string };

/**
 * The typed client. Instances, power, snapshots, SSH keys and the catalog a deploy names are
 * those of the second surface (/cloud/v1: KVM and bare metal); the account, quotes, billing,
 * jobs and `start` are /api/v1's. `raw` is the openapi-fetch client for every other route.
 */
export class Hostplane {
  readonly raw: Client<paths>;
  readonly baseUrl: string;
  /** The fetch under `raw` (timeouts, retries) and its headers, for the answers that are not JSON. */
  readonly #send: (request: Request) => Promise<Response>;
  readonly #headers: Record<string, string>;

  constructor(options: HostplaneOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#send = resilientFetch(options, this.baseUrl);
    this.#headers = {
      authorization: `Bearer ${options.token}`,
      ...(options.userAgent ? { 'user-agent': options.userAgent } : {}),
    };
    this.raw = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.#send, headers: this.#headers });
  }

  // Account, catalog and billing (/api/v1 and the second surface's catalog).

  me() {
    return unwrap(this.raw.GET('/api/v1/me'));
  }

  /** KVM and bare-metal plans with their regions. */
  async listPlans() {
    return (await unwrap(this.raw.GET('/cloud/v1/plans'))).plans;
  }

  /** Every active plan, game and web ones too. */
  async listAllPlans() {
    return (await unwrap(this.raw.GET('/api/v1/plans'))).plans;
  }

  async listRegions() {
    return (await unwrap(this.raw.GET('/cloud/v1/regions'))).regions;
  }

  async listImages() {
    return (await unwrap(this.raw.GET('/cloud/v1/images'))).images;
  }

  /** Price and spec of a plan, by label or id. */
  quote(plan: string | number) {
    return unwrap(this.raw.POST('/api/v1/quote', { body: typeof plan === 'number' ? { plan_id: plan } : { plan } }));
  }

  billing() {
    return unwrap(this.raw.GET('/api/v1/billing'));
  }

  async listInvoices() {
    return (await unwrap(this.raw.GET('/api/v1/invoices'))).invoices;
  }

  /**
   * A tax invoice as a PDF (GET /api/v1/invoices/{id}/pdf, scope billing.read). `target` is the
   * invoice's id (`invoice_id` of listInvoices) or the `pdf_url` listInvoices gave for it; a URL
   * outside this client's base URL is refused before anything is sent, so the token never leaves
   * for another host. An answer that is not application/pdf is a HostplaneError `not_pdf`.
   */
  async invoicePdf(target: number | string): Promise<InvoicePdf> {
    const url = typeof target === 'number' ? `${this.baseUrl}/api/v1/invoices/${target}/pdf` : this.#own(target);
    const response = await this.#send(new Request(url, { headers: this.#headers }));
    if (!response.ok) {
      const text = await response.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // Not the API's envelope (a proxy's page): the status alone says what happened.
      }
      throw HostplaneError.fromResponse(response, body);
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/pdf\b/i.test(contentType)) {
      await response.body?.cancel();
      throw new HostplaneError({
        status: response.status,
        code: 'not_pdf',
        message: `${new URL(url).pathname} answered ${contentType || 'no content type'}, not a PDF`,
        request_id: response.headers.get('x-request-id'),
      });
    }
    return { bytes: new Uint8Array(await response.arrayBuffer()), contentType };
  }

  /** `target` as an absolute URL under baseUrl, or a usage error (never a request elsewhere). */
  #own(target: string): string {
    const base = new URL(`${this.baseUrl}/`);
    let url: URL;
    try {
      url = new URL(target, base);
    } catch {
      throw new TypeError(`${JSON.stringify(target)} is not a URL`);
    }
    if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
      throw new TypeError(`${url.origin}${url.pathname} is not under ${this.baseUrl}: the token is not sent there`);
    }
    return url.toString();
  }

  // Instances (the second surface).

  /** One page of KVM and bare-metal instances. */
  listInstances(query: { page?: number; per_page?: number } = {}) {
    return unwrap(this.raw.GET('/cloud/v1/instances', { params: { query } }));
  }

  /** Every instance, page by page. */
  instances(options: { perPage?: number } = {}): AsyncGenerator<Instance, void, undefined> {
    const per_page = options.perPage ?? 50;
    return paginate(
      (page) => this.listInstances({ page, per_page }),
      (result) => result.instances,
    );
  }

  async getInstance(id: number) {
    return (await unwrap(this.raw.GET('/cloud/v1/instances/{id}', { params: { path: { id } } }))).instance;
  }

  /**
   * Deploy, paid from the wallet: 201 with the instance, its order and the provisioning job.
   * Without an idempotency_key one is made here, so that a retried request deploys once.
   */
  createInstance(body: DeployRequest) {
    return unwrap(
      this.raw.POST('/cloud/v1/instances', {
        body: { ...body, idempotency_key: body.idempotency_key ?? randomUUID() },
      }),
    );
  }

  /** shutdown (ACPI), reboot (graceful) or power_cycle (hard): the job. */
  async powerInstance(id: number, action: PowerAction) {
    return (
      await unwrap(this.raw.POST('/cloud/v1/instances/{id}/power', { params: { path: { id } }, body: { action } }))
    ).job;
  }

  /** Start a stopped instance (/api/v1's product action): the job. */
  async startInstance(id: number) {
    const result = await unwrap(
      this.raw.POST('/api/v1/instances/{id}/{action}', { params: { path: { id, action: 'start' } }, body: {} }),
    );
    if (!('job' in result)) throw new Error('start answered without a job');
    return result.job;
  }

  /**
   * Move a KVM instance to a larger plan (its label or id): the pro-rata difference for the rest of
   * the paid period is charged at once (402 insufficient_funds when the wallet is short), then the
   * server is stopped, resized and started. The job.
   */
  async resizeInstance(id: number, plan: string | number) {
    const result = await unwrap(
      this.raw.POST('/api/v1/instances/{id}/{action}', {
        params: { path: { id, action: 'resize' } },
        body: { plan: String(plan) },
      }),
    );
    if (!('job' in result)) throw new Error('resize answered without a job');
    return result.job;
  }

  /** Delete the instance and its disks; `confirm` must equal its label. The job. */
  async deleteInstance(id: number, confirm: string) {
    return (await unwrap(this.raw.DELETE('/cloud/v1/instances/{id}', { params: { path: { id } }, body: { confirm } })))
      .job;
  }

  // Services of every type (/api/v1/instances: vps, baremetal, game and web).

  /** One page of your services, every type, with their live power state. */
  listServices(query: { page?: number; per_page?: number } = {}) {
    return unwrap(this.raw.GET('/api/v1/instances', { params: { query } }));
  }

  /** Every service, page by page. */
  services(options: { perPage?: number } = {}): AsyncGenerator<Service, void, undefined> {
    const per_page = options.perPage ?? 50;
    return paginate(
      (page) => this.listServices({ page, per_page }),
      (result) => result.instances,
    );
  }

  /** One service of any type, with its credentials (null while it has none) and last job. */
  async getService(id: number) {
    return (await unwrap(this.raw.GET('/api/v1/instances/{id}', { params: { path: { id } } }))).instance;
  }

  /** Live power, CPU, memory and uptime (web hosting has none: 422 not_supported). */
  async serviceStats(id: number) {
    return (await unwrap(this.raw.GET('/api/v1/instances/{id}/stats', { params: { path: { id } } }))).stats;
  }

  /**
   * start, stop, restart or kill, on any service that has power (a game server's signals, a
   * virtual server's start, ACPI stop, reboot and hard stop): the job.
   */
  async powerService(id: number, action: ServicePowerAction) {
    const result = await unwrap(
      this.raw.POST('/api/v1/instances/{id}/{action}', { params: { path: { id, action } }, body: {} }),
    );
    if (!('job' in result)) throw new Error(`${action} answered without a job`);
    return result.job;
  }

  // Search and webhooks.

  /** Your services, IPs, orders, transactions and deposits matching `q` (operators type: status: loc: node:). */
  search(q: string, options: { type?: string; limit?: number } = {}) {
    return unwrap(this.raw.GET('/api/v1/search/', { params: { query: { q, ...options } } }));
  }

  /** Your webhook endpoints (read-only here; they are managed on the session surface). */
  listWebhooks() {
    return unwrap(this.raw.GET('/api/v1/webhooks'));
  }

  // Jobs.

  async getJob(id: number) {
    return (await unwrap(this.raw.GET('/api/v1/jobs/{id}', { params: { path: { id } } }))).job;
  }

  /** Read the job until it has succeeded or failed, and return it as it ended. */
  async waitForJob(id: number, options: WaitOptions = {}): Promise<Job> {
    const interval = options.intervalMs ?? 1000;
    const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    let seen = '';
    for (;;) {
      options.signal?.throwIfAborted();
      const job = await this.getJob(id);
      const state = `${job.status}|${job.progress}|${job.step ?? ''}`;
      if (state !== seen) {
        seen = state;
        options.onProgress?.(job);
      }
      if (job.status === 'succeeded' || job.status === 'failed') return job;
      if (Date.now() >= deadline) {
        throw new HostplaneError({
          status: 0,
          code: 'timeout',
          message: `job ${id} had not finished after ${options.timeoutMs} ms (${job.status}, ${job.progress}%)`,
          request_id: null,
        });
      }
      await sleep(interval, undefined, options.signal ? { signal: options.signal } : {});
    }
  }

  // SSH keys (an account resource).

  async listSshKeys() {
    return (await unwrap(this.raw.GET('/cloud/v1/ssh-keys'))).ssh_keys;
  }

  async addSshKey(name: string, publicKey: string) {
    return (await unwrap(this.raw.POST('/cloud/v1/ssh-keys', { body: { name, public_key: publicKey } }))).ssh_key;
  }

  async deleteSshKey(id: number) {
    return (await unwrap(this.raw.DELETE('/cloud/v1/ssh-keys/{id}', { params: { path: { id } } }))).ssh_key;
  }

  // Snapshots of KVM instances.

  listSnapshots(id: number) {
    return unwrap(this.raw.GET('/cloud/v1/instances/{id}/snapshots', { params: { path: { id } } }));
  }

  async createSnapshot(id: number, name: string, description?: string) {
    return (
      await unwrap(
        this.raw.POST('/cloud/v1/instances/{id}/snapshots', {
          params: { path: { id } },
          body: { action: 'create', name, ...(description === undefined ? {} : { description }) },
        }),
      )
    ).job;
  }

  async restoreSnapshot(id: number, snapshotId: string) {
    return (
      await unwrap(
        this.raw.POST('/cloud/v1/instances/{id}/snapshots', {
          params: { path: { id } },
          body: { action: 'restore', snapshot_id: snapshotId },
        }),
      )
    ).job;
  }

  /**
   * Scheduled backups of a virtual server (a paid add-on: turning it on charges the rest of the
   * period pro rata, 402 when the wallet is short). `dry_run` answers the price without changing anything.
   */
  setBackupSchedule(id: number, schedule: BackupScheduleBody) {
    return unwrap(this.raw.PUT('/api/v1/instances/{id}/backup-schedule', { params: { path: { id } }, body: schedule }));
  }

  async deleteSnapshot(id: number, snapshotId: string) {
    return (
      await unwrap(
        this.raw.DELETE('/cloud/v1/instances/{id}/snapshots/{sid}', { params: { path: { id, sid: snapshotId } } }),
      )
    ).job;
  }

  // Reverse DNS of an instance's IPv4 address.

  /** Set the PTR hostname of the instance's IPv4 address (null clears it): `{ipv4, ptr}` as it is now. */
  async setReverseDns(id: number, ptr: string | null) {
    return (await unwrap(this.raw.PUT('/cloud/v1/instances/{id}/rdns', { params: { path: { id } }, body: { ptr } })))
      .rdns;
  }
}

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type Ok<Op> = Op extends { responses: { 200: infer R } }
  ? Json<R>
  : Op extends { responses: { 201: infer R } }
    ? Json<R>
    : never;

/** The shapes the API answers with, named (all from the generated document). */
export type Me = Ok<paths['/api/v1/me']['get']>;
export type Instance = Ok<paths['/cloud/v1/instances']['get']>['instances'][number];
export type InstanceDetail = Ok<paths['/cloud/v1/instances/{id}']['get']>['instance'];
export type Deployed = Ok<paths['/cloud/v1/instances']['post']>;
export type Job = Ok<paths['/api/v1/jobs/{id}']['get']>['job'];
export type Plan = Ok<paths['/cloud/v1/plans']['get']>['plans'][number];
export type Region = Ok<paths['/cloud/v1/regions']['get']>['regions'][number];
export type Image = Ok<paths['/cloud/v1/images']['get']>['images'][number];
export type SshKey = Ok<paths['/cloud/v1/ssh-keys']['get']>['ssh_keys'][number];
export type Snapshot = Ok<paths['/cloud/v1/instances/{id}/snapshots']['get']>['snapshots'][number];
export type ReverseDns = Ok<paths['/cloud/v1/instances/{id}/rdns']['put']>['rdns'];
export type Billing = Ok<paths['/api/v1/billing']['get']>;
export type Invoice = Ok<paths['/api/v1/invoices']['get']>['invoices'][number];
export type Quote = Ok<paths['/api/v1/quote']['post']>;
export type Service = Ok<paths['/api/v1/instances']['get']>['instances'][number];
export type ServiceDetail = Ok<paths['/api/v1/instances/{id}']['get']>['instance'];
export type ServiceStats = Ok<paths['/api/v1/instances/{id}/stats']['get']>['stats'];
export type SearchResult = Ok<paths['/api/v1/search/']['get']>;
export type WebhookEndpoint = Ok<paths['/api/v1/webhooks']['get']>['endpoints'][number];
export type BackupScheduleBody = NonNullable<
  paths['/api/v1/instances/{id}/backup-schedule']['put']['requestBody']
>['content']['application/json'];
export type BackupScheduleAnswer = Ok<paths['/api/v1/instances/{id}/backup-schedule']['put']>;
