// Game-server test helpers: an app with the Pterodactyl emulator, a funded client with a game
// server ordered and installed, and calls of the management route (GET reads with a query,
// POST mutations with a JSON body and CSRF, multipart uploads).

import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Browser } from './browser.ts';
import { freshIp, signedInBrowser } from './factories.ts';
import { multipart } from './uploads.ts';
import { type UpstreamApp, waitFor } from './upstreams.ts';

export const GAME = '/api/v1/client/game/';
export const WAIT = 60_000;

export interface GameClient {
  browser: Browser;
  accountId: number;
  serviceId: number;
  label: string;
  read(action: string, params?: Record<string, string | number>, serviceId?: number): Promise<LightMyRequestResponse>;
  act(
    action: string,
    body?: Record<string, unknown>,
    serviceId?: number,
    csrf?: boolean,
  ): Promise<LightMyRequestResponse>;
  upload(
    directory: string | null,
    file: { name: string; data: Buffer },
    serviceId?: number,
  ): Promise<LightMyRequestResponse>;
}

let orders = 0;

/** A signed-in, funded client; with `order`, a Minecraft server ordered and waited for until active. */
export async function gameClient(
  u: UpstreamApp,
  options: { order?: boolean; plan?: string } = {},
): Promise<GameClient> {
  const { browser, account } = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(account.id, '5000', 'test float');
  const client: GameClient = {
    browser,
    accountId: account.id,
    serviceId: 0,
    label: '',
    read: (action, params = {}, serviceId = client.serviceId) =>
      browser.get(
        `${GAME}?${new URLSearchParams({
          service: String(serviceId),
          action,
          ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
        })}`,
      ),
    act: (action, body = {}, serviceId = client.serviceId, csrf = true) =>
      browser.post(`${GAME}?service=${serviceId}&action=${action}`, body, { csrf }),
    async upload(directory, file, serviceId = client.serviceId) {
      const form = multipart({ csrf_token: browser.csrfToken ?? '', ...(directory === null ? {} : { directory }) }, [
        { field: 'file', filename: file.name, contentType: 'application/octet-stream', data: file.data },
      ]);
      return u.t.inject({
        method: 'POST',
        url: `${GAME}?service=${serviceId}&action=file_upload`,
        headers: {
          'content-type': form.contentType,
          'x-csrf-token': browser.csrfToken ?? '',
          cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        },
        remoteAddress: browser.ip,
        payload: form.body,
      });
    },
  };
  if (options.order) {
    const made = await orderGame(u, client, options.plan ?? 'mc-java-2g');
    client.serviceId = made.serviceId;
    client.label = made.label;
  }
  return client;
}

/** Order a game plan and wait for its provisioning job to finish; asserts it succeeded. */
export async function orderGame(
  u: UpstreamApp,
  client: Pick<GameClient, 'browser'>,
  plan = 'mc-java-2g',
  expect: 'succeeded' | 'failed' = 'succeeded',
): Promise<{ serviceId: number; label: string; jobId: number }> {
  const db = u.t.deps.database.db;
  const row = await db.selectFrom('plans').select('id').where('label', '=', plan).executeTakeFirstOrThrow();
  const label = `mc${++orders}`;
  const res = await client.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: row.id,
      config: { server_name: label, eula: true, region: 'mum1' },
      idempotency_key: `game-order-${orders}-${Date.now()}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const jobId = res.json().job.id as number;
  const job = await waitFor(
    `provisioning job ${jobId}`,
    async () => {
      const j = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
  assert.equal(job.status, expect, `${job.error_code}: ${job.error_message}`);
  return { serviceId: res.json().service.id, label, jobId };
}

/** The emulator's server of a service (by its external id `hp-<installation>-svc-<id>`). */
export function panelServer(u: UpstreamApp, serviceId: number) {
  const ptero = u.ptero;
  assert.ok(ptero, 'the app has no game panel');
  const name = `hp-${u.t.deps.installation.id}-svc-${serviceId}`;
  const server = [...ptero.state.servers.values()].find((s) => s.externalId === name);
  assert.ok(server, `no panel server for service ${serviceId}`);
  return server;
}

/** A file of the service's panel server as the emulator holds it (null: none). */
export function panelFile(u: UpstreamApp, serviceId: number, path: string): Buffer | null {
  const server = panelServer(u, serviceId);
  const tree = u.ptero?.state.files.get(server.id);
  const key = path.replace(/^\/+/, '');
  const entry = tree?.get(key) ?? tree?.get(`/${key}`);
  return entry && !entry.dir ? entry.content : null;
}
