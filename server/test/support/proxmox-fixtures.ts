// Helpers for the Proxmox driver tests: VM specs, raw calls to the emulated node (to see what
// the driver left there exactly as PVE would show it), UpstreamError assertions that also check
// no secret leaked, and a throwaway self-signed certificate for the HTTPS tests.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProxmoxEmulator } from '../../../emulators/src/proxmox/index.ts';
import { UpstreamError } from '../../src/upstreams/errors.ts';
import type { Hypervisor, VmSpec } from '../../src/upstreams/hypervisor.ts';
import { ProxmoxClient } from '../../src/upstreams/proxmox/client.ts';
import { createProxmoxHypervisor, type ProxmoxConfig } from '../../src/upstreams/proxmox/hypervisor.ts';

/** Part of every token secret the tests use: no error message may ever contain it. */
export const CANARY = 'CANARYSECRET';

let n = 0;
const cleanups: (() => unknown)[] = [];

/** Run at the end of the file: drivers made here, and whatever else was registered. */
export function onCleanup(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A driver for an emulated node with test timings (fast polls, short deadlines). */
export function driverFor(target: ProxmoxEmulator, overrides: Partial<ProxmoxConfig> = {}): Hypervisor {
  const made = createProxmoxHypervisor({
    endpoint: target.url,
    node: target.node,
    tokenId: target.tokenId,
    tokenSecret: target.tokenSecret,
    pollIntervalMs: 5,
    requestTimeoutMs: 1500,
    taskTimeoutMs: 5000,
    ...overrides,
  });
  onCleanup(() => made.close());
  return made;
}

export function vmSpec(overrides: Partial<VmSpec> = {}): VmSpec {
  n++;
  return {
    name: `hp-svc-${n}`,
    templateVmid: 9000,
    cores: 2,
    memoryMb: 4096,
    diskGb: 40,
    cloudInit: {
      hostname: `web${n}.example.in`,
      user: 'root',
      password: `Gen3rated-Pass-${n}`,
      sshKeys: [
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTests+Only/xxxxxxxxxxxxxxxxxxxxx asha@laptop',
        'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== ops key',
      ],
      ipv4: { address: '203.0.113.10', prefix: 24, gateway: '203.0.113.1' },
      nameservers: ['1.1.1.1', '8.8.8.8'],
    },
    tags: ['hostplane', `svc-${n}`],
    ...overrides,
  };
}

/** The driver's low-level client, to see how it maps an answer the driver itself would have avoided. */
export function clientFor(target: ProxmoxEmulator): ProxmoxClient {
  const client = new ProxmoxClient({
    endpoint: target.url,
    node: target.node,
    tokenId: target.tokenId,
    tokenSecret: target.tokenSecret,
  });
  onCleanup(() => client.close());
  return client;
}

/** A "node" that answers every call 500 with the Authorization header it got in the message. */
export async function startEchoNode(): Promise<string> {
  const echo = createServer((req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: null, message: `bad header ${req.headers.authorization}\n` }));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  onCleanup(() => new Promise((r) => echo.close(r)));
  return `http://127.0.0.1:${(echo.address() as { port: number }).port}`;
}

/** A path for an emulator state file in a directory removed at cleanup. */
export function tempStateFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-pve-state-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'pve.json');
}

export interface RawAnswer {
  status: number;
  reason: string;
  body: { data?: unknown; message?: string; errors?: Record<string, string> };
}

/** One call to the emulated node as any API client would make it. */
export async function raw(
  emulator: ProxmoxEmulator,
  method: string,
  path: string,
  options: { params?: Record<string, string>; json?: unknown; auth?: string | null } = {},
): Promise<RawAnswer> {
  const url = new URL(`${emulator.url}/api2/json${path}`);
  const headers: Record<string, string> = {};
  const auth = options.auth === undefined ? `PVEAPIToken=${emulator.tokenId}=${emulator.tokenSecret}` : options.auth;
  if (auth !== null) headers.authorization = auth;
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  } else if (options.params && method !== 'GET') {
    body = new URLSearchParams(options.params).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (options.params) {
    for (const [k, v] of Object.entries(options.params)) url.searchParams.set(k, v);
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          reason: res.statusMessage ?? '',
          body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Wait for a task of the emulated node to stop; its final status. */
export async function settle(emulator: ProxmoxEmulator, upid: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const answer = await raw(emulator, 'GET', `/nodes/${emulator.node}/tasks/${encodeURIComponent(upid)}/status`);
    const status = answer.body.data as Record<string, unknown>;
    if (status.status === 'stopped') return status;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`task ${upid} did not stop`);
}

export async function rejectsUpstream(promise: Promise<unknown>, check: (e: UpstreamError) => void): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof UpstreamError, `not an UpstreamError: ${String(error)}`);
    check(error);
    assert.doesNotMatch(error.message, new RegExp(CANARY));
    return true;
  });
}

/** Rejects with an UpstreamError that has these properties (and no secret in its message). */
export function rejectsWith(
  promise: Promise<unknown>,
  expected: { kind?: string; retryable?: boolean; status?: number; message?: RegExp },
): Promise<void> {
  return rejectsUpstream(promise, (e) => {
    const { message, ...fields } = expected;
    assert.deepEqual(
      Object.fromEntries(Object.keys(fields).map((key) => [key, e[key as keyof UpstreamError]])),
      fields,
      e.message,
    );
    if (message) assert.match(e.message, message);
  });
}

/** A self-signed certificate for 127.0.0.1, or null when openssl is not installed. */
export function selfSignedCert(): { key: string; cert: string } | null {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-pve-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
