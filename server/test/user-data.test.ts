// Cloud-init user data on virtual-server deploys (issue 37, CONTRACT §13), against an emulated
// Proxmox node: from each of the three deploy routes it reaches the VM as a snippet on the
// node's snippets storage named by `cicustom: user=…` (read back through the emulator's API,
// as the node holds it); over 64 KiB (counted in UTF-8 bytes), not a string, or for a plan that
// is not a virtual server is 422 on each surface; sealed at rest until provisioning used it
// and then cleared; never in an order's config, a view, an answer or a log line.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { USER_DATA_MAX_BYTES } from '../src/core/orders/order-input.ts';
import { openUserData } from '../src/core/services/user-data.ts';
import type { Browser } from './support/browser.ts';
import { cliRunner, ok } from './support/cli.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const CLOUD = '/cloud/v1';

let u: UpstreamApp;
let browser: Browser;
let token: ApiClient;
/** Every marker put in user data: none may appear in an answer or a log line. */
const markers: string[] = [];
/** Every answer the tests got. */
const answers: LightMyRequestResponse[] = [];

function secretScript(): { marker: string; userData: string } {
  const marker = `UD-SECRET-${randomBytes(8).toString('hex')}`;
  markers.push(marker);
  return {
    marker,
    userData: `#cloud-config\nwrite_files:\n  - path: /root/token\n    content: "${marker}"\nruncmd:\n  - echo ok\n`,
  };
}

const seen = (res: LightMyRequestResponse) => {
  answers.push(res);
  return res;
};

let planIds: Record<string, number>;
let n = 0;

before(async () => {
  u = await createUpstreamApp();
  const signedIn = await signedInBrowser(u.t, freshIp());
  browser = signedIn.browser;
  await u.t.deps.wallet.credit(signedIn.account.id, '50000', 'test float');
  token = await apiClient(u.t, ['*'], '50000');
  const plans = await u.t.deps.database.db.selectFrom('plans').select(['id', 'label']).execute();
  planIds = Object.fromEntries(plans.map((p) => [p.label, p.id]));
});
after(() => u.close());

const sessionOrder = (config: Record<string, unknown>, plan = 'vps-1c-1g') =>
  browser
    .post('/api/v1/client/orders/', { plan_id: planIds[plan], config, idempotency_key: `ud-s-${++n}` }, { csrf: true })
    .then(seen);

const restDeploy = (body: Record<string, unknown>) =>
  token
    .call('POST', '/api/v1/instances', {
      plan: 'vps-1c-1g',
      server_name: `rest${++n}`,
      eula: false,
      idempotency_key: `ud-r-${n}`,
      ...body,
    })
    .then(seen);

const cloudDeploy = (body: Record<string, unknown>) =>
  token
    .call('POST', `${CLOUD}/instances`, {
      type: 'kvm',
      plan: 'vps-1c-1g',
      region: 'mum1',
      image: 'debian-12',
      hostname: `cloud${++n}.example.in`,
      idempotency_key: `ud-c-${n}`,
      ...body,
    })
    .then(seen);

async function activeService(id: number) {
  return waitFor(`service ${id} to settle`, async () => {
    const row = await u.t.deps.database.db
      .selectFrom('services')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    if (row.status === 'failed') throw new Error(`service ${id} failed`);
    return row.status === 'active' ? row : null;
  });
}

/** Through the node's API, as a real node answers: the VM's config and the snippets storage's content. */
async function pve(path: string) {
  const res = await fetch(`${u.pve.url}/api2/json${path}`, {
    headers: { authorization: `PVEAPIToken=${u.pve.tokenId}=${u.pve.tokenSecret}` },
  });
  assert.equal(res.status, 200, path);
  return ((await res.json()) as { data: unknown }).data;
}

/** The VM of a service as the node holds it: its config, and what its cloud-init drive was generated with. */
async function vmOf(serviceId: number) {
  const row = await activeService(serviceId);
  const vmid = (row.external as { vmid: number }).vmid;
  const config = (await pve(`/nodes/${u.pve.node}/qemu/${vmid}/config`)) as Record<string, string>;
  const state = (await (await fetch(`${u.pve.url}/__emulator/state`)).json()) as {
    vms: { vmid: number; cloudinit?: { user?: string } | null }[];
  };
  const cloudinit = state.vms.find((vm) => vm.vmid === vmid)?.cloudinit ?? null;
  const snippets = (await pve(`/nodes/${u.pve.node}/storage/local/content?content=snippets`)) as { volid: string }[];
  return { row, vmid, config, cloudinit, snippets };
}

/** The user data reached the VM: a snippet named by cicustom, holding the platform's settings and then the customer's data. */
async function assertReached(serviceId: number, userData: string) {
  const { row, config, cloudinit, snippets } = await vmOf(serviceId);
  const volid = /^user=(local:snippets\/[^,]+\.yaml)$/.exec(config.cicustom ?? '')?.[1];
  assert.ok(volid, `cicustom names a user snippet: ${config.cicustom}`);
  assert.ok(
    snippets.some((s) => s.volid === volid),
    'the snippet is on the node storage',
  );
  const user = cloudinit?.user ?? '';
  assert.match(user, /^Content-Type: multipart\/mixed; boundary="/);
  assert.ok(user.includes(userData), 'the customer data is a part of the user-data');
  // The platform's own settings came first (PVE generates none with cicustom user=): the root
  // password as a SHA-512 crypt hash, never in the clear.
  assert.ok(user.indexOf('#cloud-config\nhostname:') < user.indexOf(userData));
  assert.match(user, /password: "\$6\$[^"]+"/);
  const credentials = (
    await token.call('GET', `/api/v1/instances/${serviceId}`).then((r) => (r.statusCode === 200 ? r : null))
  )?.json()?.instance?.credentials;
  if (credentials?.password) assert.ok(!user.includes(credentials.password), 'no clear password in the snippet');
  // Provisioning has used it: not kept.
  assert.equal(row.user_data_sealed, null);
  return { volid };
}

async function orderConfigOf(serviceId: number) {
  const order = await u.t.deps.database.db
    .selectFrom('orders')
    .select('config')
    .where('service_id', '=', serviceId)
    .executeTakeFirstOrThrow();
  return order.config;
}

describe('user data reaches the VM', () => {
  test('from the session order route (config.user_data)', async () => {
    const { userData } = secretScript();
    const res = await sessionOrder({ hostname: `sess${n}.example.in`, os: 'debian-12', user_data: userData });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().service.id as number;
    await assertReached(id, userData);
    assert.equal('user_data' in (await orderConfigOf(id)), false, "not in the order's config");
  });

  test('from POST /api/v1/instances, sealed at rest until provisioning used it', async () => {
    const { marker, userData } = secretScript();
    // The node is down: provisioning waits, and the stored user data can be looked at.
    await u.pve.setFaults({ down: true });
    let id: number;
    try {
      const res = await restDeploy({ user_data: userData, os: 'ubuntu-24.04' });
      assert.equal(res.statusCode, 201, res.body);
      id = res.json().instance.id as number;
      const waiting = await waitFor('a failed attempt', async () => {
        const row = await u.t.deps.database.db
          .selectFrom('services')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const job = await u.t.deps.database.db
          .selectFrom('jobs')
          .select('error_code')
          .where('service_id', '=', id)
          .executeTakeFirstOrThrow();
        return job.error_code === 'node_unreachable' ? row : null;
      });
      assert.equal(waiting.status, 'provisioning');
      assert.ok(waiting.user_data_sealed, 'kept for provisioning');
      assert.ok(!waiting.user_data_sealed.includes(marker), 'encrypted at rest');
      assert.ok(!JSON.stringify(waiting.config).includes(marker), "not in the service's config");
      assert.equal(openUserData(u.t.deps.secretKey, waiting), userData);
    } finally {
      await u.pve.setFaults({ down: false });
    }
    await assertReached(id, userData);
    assert.equal('user_data' in (await orderConfigOf(id)), false);
  });

  test('from POST {ALT_BASE_PATH}/v1/instances, exactly 64 KiB of UTF-8; deleting the instance removes the snippet', async () => {
    const { userData: head } = secretScript();
    // Multi-byte characters: the limit is in bytes.
    const room = USER_DATA_MAX_BYTES - Buffer.byteLength(`${head}# \n`);
    const userData = `${head}# ${'é'.repeat(Math.floor(room / 2))}${'x'.repeat(room % 2)}\n`;
    assert.equal(Buffer.byteLength(userData), USER_DATA_MAX_BYTES);
    const res = await cloudDeploy({ user_data: userData });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().instance.id as number;
    const { volid } = await assertReached(id, userData);
    const label = res.json().instance.label ?? res.json().instance.hostname;
    const del = seen(await token.call('DELETE', `${CLOUD}/instances/${id}`, { confirm: label }));
    assert.equal(del.statusCode, 202, del.body);
    await waitFor('the instance to be deleted', async () => {
      const row = await u.t.deps.database.db
        .selectFrom('services')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.status === 'terminated' ? row : null;
    });
    const snippets = (await pve(`/nodes/${u.pve.node}/storage/local/content?content=snippets`)) as { volid: string }[];
    assert.equal(
      snippets.some((s) => s.volid === volid),
      false,
      'the snippet went with the VM',
    );
  });
});

describe('from the CLI', () => {
  const cli = cliRunner('hostplane-user-data');
  after(() => cli.cleanup());

  test('hostplane instances create --user-data FILE reaches the VM', async () => {
    const { userData } = secretScript();
    const url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
    const home = cli.home();
    writeFileSync(join(home, 'init.yaml'), userData);
    const env = { HOSTPLANE_TOKEN: token.secret, HOSTPLANE_URL: url, HOSTPLANE_POLL_MS: '50' };
    const args = ['instances', 'create', '--plan', 'vps-1c-1g', '--hostname', `cli${++n}.example.in`];
    const created = ok(await cli.run(home, [...args, '--user-data', 'init.yaml', '-o', 'json'], { env }));
    const { instance, job } = JSON.parse(created.stdout) as { instance: { id: number }; job: { status: string } };
    assert.equal(job.status, 'succeeded');
    await assertReached(instance.id, userData);
    const missing = await cli.run(home, [...args, '--user-data', 'nowhere.yaml'], { env });
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /--user-data: cannot read nowhere\.yaml/);
  });
});

describe('refused with 422 on every surface', () => {
  const tooBig = `#!/bin/sh\n${'x'.repeat(USER_DATA_MAX_BYTES - 9)}`;
  // 65,537 bytes in fewer characters: counted in bytes.
  const tooBigWide = 'é'.repeat(USER_DATA_MAX_BYTES / 2) + 'x';

  test('64 KiB + 1 byte', async () => {
    assert.equal(Buffer.byteLength(tooBig), USER_DATA_MAX_BYTES + 1);
    assert.equal(Buffer.byteLength(tooBigWide), USER_DATA_MAX_BYTES + 1);
    for (const data of [tooBig, tooBigWide]) {
      const session = await sessionOrder({ os: 'debian-12', user_data: data });
      assert.equal(session.statusCode, 422, session.body);
      assert.equal(session.json().success, false);
      assert.equal(session.json().code, 'bad_config_user_data');
      assert.match(session.json().errors['config.user_data'], /at most 65536 bytes \(64 KiB\).*65537 bytes/);
      for (const res of [await restDeploy({ user_data: data }), await cloudDeploy({ user_data: data })]) {
        assert.equal(res.statusCode, 422, res.body);
        assert.equal(res.json().ok, false);
        assert.equal(res.json().error, 'bad_config_user_data');
        assert.match(res.json().details.fields.user_data, /at most 65536 bytes \(64 KiB\).*65537 bytes/);
        assert.match(res.json().message, /user_data/);
      }
    }
  });

  test('not a string', async () => {
    const session = await sessionOrder({ os: 'debian-12', user_data: 42 });
    assert.equal(session.statusCode, 422, session.body);
    assert.ok(session.json().errors['config.user_data']);
    for (const res of [
      await restDeploy({ user_data: { runcmd: ['id'] } }),
      await cloudDeploy({ user_data: ['#cloud-config'] }),
    ]) {
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error, 'validation_failed');
      assert.ok(res.json().details.fields.user_data, res.body);
    }
  });

  test('for a plan that is not a virtual server', async () => {
    const { userData } = secretScript();
    const game = await sessionOrder({ eula: true, user_data: userData }, 'mc-java-2g');
    assert.equal(game.statusCode, 422, game.body);
    assert.match(game.json().errors['config.user_data'], /only for virtual servers/);
    const web = await restDeploy({ plan: 'web-starter', domain: 'shop.example.in', user_data: userData });
    assert.equal(web.statusCode, 422, web.body);
    assert.equal(web.json().error, 'bad_config_user_data');
    assert.match(web.json().details.fields.user_data, /only for virtual servers \(vps \/ kvm\), not web plans/);
    const metal = await cloudDeploy({
      type: 'baremetal',
      plan: 'bm-2cpu-64g',
      image: 'debian-12',
      user_data: userData,
    });
    assert.equal(metal.statusCode, 422, metal.body);
    assert.equal(metal.json().error, 'bad_config_user_data');
    assert.match(metal.json().details.fields.user_data, /not baremetal plans/);
  });
});

describe('never shown, never logged', () => {
  test('no view, answer or log line holds it', async () => {
    assert.ok(markers.length >= 4);
    const views = [
      await browser.get('/api/v1/client/services/'),
      await browser.get('/api/v1/client/orders/'),
      await token.call('GET', '/api/v1/instances'),
      await token.call('GET', `${CLOUD}/instances`),
    ];
    for (const res of views) assert.equal(res.statusCode, 200, res.body);
    const services = views[0]?.json().services as { id: number }[];
    for (const s of services) views.push(await browser.get(`/api/v1/client/services/?id=${s.id}`));
    const orders = views[1]?.json().orders as { id: number }[];
    for (const o of orders) views.push(await browser.get(`/api/v1/client/orders/?id=${o.id}`));
    for (const i of views[2]?.json().instances as { id: number }[])
      views.push(await token.call('GET', `/api/v1/instances/${i.id}`));
    const logs = u.t.logs.text();
    for (const marker of markers) {
      for (const res of [...answers, ...views]) assert.ok(!res.body.includes(marker), `an answer shows ${marker}`);
      assert.ok(!logs.includes(marker), 'a log line holds the user data');
    }
    // Nor does any stored order or service config.
    const stored = await u.t.deps.database.db.selectFrom('orders').select('config').execute();
    const configs = await u.t.deps.database.db.selectFrom('services').select('config').execute();
    const text = JSON.stringify([stored, configs]);
    for (const marker of markers) assert.ok(!text.includes(marker));
  });
});
