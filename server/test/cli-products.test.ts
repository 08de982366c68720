// ci: one engine (the CLI is a client of the HTTP surfaces; every API path it calls runs on both engines in the other files)
// `hostplane` for every product on the token surfaces (issue 37), as a person runs it: the real
// binary against the real app on 127.0.0.1 with the Proxmox, Pterodactyl, cPanel and Redfish
// emulators and the worker. One account holds a VPS, a bare-metal server, a game server and a web
// site, deployed through POST /api/v1/instances: `instances list` (every type, --type, the
// columns of each type, -o json = the API's objects) and `show`; game power reaching the panel;
// `search`; `billing`; `webhooks list` (GET /api/v1/webhooks); the completion scripts of bash, zsh
// and fish (syntax, and `hostplane inst<TAB>` → instances; zsh and fish are skipped with a message
// when not installed); errors as JSON on stderr with -o json; bad usage exits 2.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { write as writeFile } from '../../emulators/src/pterodactyl/files.ts';
import { type CliResult, cliRunner, ok } from './support/cli.ts';
import { panelServer } from './support/game.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { ROOT } from './support/template.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WAIT = 60_000;
const cli = cliRunner('hostplane-cli-products');
let u: UpstreamApp;
let url: string;
let owner: ApiClient;
let dir: string;
/** The services by type, as GET /api/v1/instances/{id} shows them once active. */
const ids: Record<'vps' | 'baremetal' | 'game' | 'web', number> = { vps: 0, baremetal: 0, game: 0, web: 0 };

/** `hostplane …` with the owner's token (or `token`). */
function hostplane(args: string[], token = owner.secret, env: Record<string, string> = {}): Promise<CliResult> {
  return cli.run(dir, args, {
    env: { HOSTPLANE_TOKEN: token, HOSTPLANE_URL: url, HOSTPLANE_POLL_MS: '50', ...env },
  });
}

const okJson = async (args: string[]) => JSON.parse(ok(await hostplane([...args, '-o', 'json'])).stdout);

/** Deploy on the token surface and wait for the provisioning job to succeed. */
async function deploy(body: Record<string, unknown>): Promise<number> {
  const res = await owner.call('POST', '/api/v1/instances', { region: 'mum1', eula: true, ...body });
  assert.equal(res.statusCode, 201, res.body);
  const { instance, job } = res.json();
  await waitFor(
    `job ${job.id} of ${body.server_name}`,
    async () => {
      const j = (await owner.call('GET', `/api/v1/jobs/${job.id}`)).json().job;
      assert.notEqual(j.status, 'failed', JSON.stringify(j.error));
      return j.status === 'succeeded';
    },
    WAIT,
  );
  return instance.id;
}

/** Which shells are here: zsh and fish are optional (the tests that need them skip). */
const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

before(async () => {
  u = await createUpstreamApp({ game: true, web: true, redfish: true });
  url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  owner = await apiClient(u.t, ['*'], '20000');
  dir = cli.home();
  ids.vps = await deploy({ plan: 'vps-1c-1g', server_name: 'p-vps', idempotency_key: 'p-vps' });
  ids.baremetal = await deploy({ plan: 'bm-2cpu-64g', server_name: 'p-metal', idempotency_key: 'p-metal' });
  ids.game = await deploy({ plan: 'mc-java-2g', server_name: 'p-game', idempotency_key: 'p-game' });
  ids.web = await deploy({
    plan: 'web-starter',
    server_name: 'p-web',
    domain: 'cli-shop.example.in',
    idempotency_key: 'p-web',
  });
});

after(async () => {
  await u.close();
  cli.cleanup();
});

describe('instances list and show: every type', () => {
  test('list: one table of all four types; -o json is GET /api/v1/instances', async () => {
    const table = ok(await hostplane(['instances', 'list'])).stdout;
    assert.match(table, /^ID\s+LABEL\s+TYPE\s+STATUS\s+POWER\s+ADDRESS\s+REGION\s+PLAN$/m);
    assert.match(
      table,
      new RegExp(
        `^${ids.vps}\\s+p-vps\\s+vps\\s+active\\s+\\S+\\s+\\d+\\.\\d+\\.\\d+\\.\\d+\\s+mum1\\s+vps-1c-1g$`,
        'm',
      ),
    );
    assert.match(table, new RegExp(`^${ids.baremetal}\\s+p-metal\\s+baremetal\\s+active\\s+.*bm-2cpu-64g$`, 'm'));
    assert.match(table, new RegExp(`^${ids.game}\\s+p-game\\s+game\\s+active\\s+.*mc-java-2g$`, 'm'));
    // A web site has no power: its address is its domain.
    assert.match(
      table,
      new RegExp(`^${ids.web}\\s+p-web\\s+web\\s+active\\s+-\\s+cli-shop\\.example\\.in\\s+mum1\\s+web-starter$`, 'm'),
    );

    const list = await okJson(['instances', 'list']);
    const api = (await owner.call('GET', '/api/v1/instances')).json().instances;
    const strip = (rows: Record<string, unknown>[]) =>
      rows.map(({ power: _p, live_as_of: _l, ...rest }) => rest).sort((a, b) => Number(a.id) - Number(b.id));
    assert.deepEqual(strip(list), strip(api), 'the API objects, unchanged (live power aside)');
    assert.deepEqual(list.map((s: { type: string }) => s.type).sort(), ['baremetal', 'game', 'vps', 'web']);
  });

  test('--type: only that type, with its own columns (kvm is vps)', async () => {
    const game = ok(await hostplane(['instances', 'list', '--type', 'game'])).stdout;
    assert.match(game, /^ID\s+LABEL\s+STATUS\s+POWER\s+ADDRESS\s+REGION\s+PLAN\s+PAID UNTIL$/m);
    assert.match(game, new RegExp(`^${ids.game}\\s+p-game\\s+active\\s+`, 'm'));
    assert.doesNotMatch(game, /p-vps|p-web|p-metal/);

    const web = ok(await hostplane(['instances', 'list', '-t', 'web'])).stdout;
    assert.match(web, /^ID\s+LABEL\s+STATUS\s+DOMAIN\s+REGION\s+PLAN\s+PAID UNTIL$/m);
    assert.match(
      web,
      new RegExp(`^${ids.web}\\s+p-web\\s+active\\s+cli-shop\\.example\\.in\\s+mum1\\s+web-starter\\s+\\d{4}-`, 'm'),
    );

    const vps = ok(await hostplane(['instances', 'list', '--type', 'vps'])).stdout;
    assert.match(vps, /^ID\s+LABEL\s+STATUS\s+POWER\s+IPV4\s+HOSTNAME\s+OS\s+REGION\s+PLAN$/m);
    assert.equal(ok(await hostplane(['instances', 'list', '--type', 'kvm'])).stdout, vps);

    for (const type of ['vps', 'baremetal', 'game', 'web'] as const) {
      const rows = await okJson(['instances', 'list', '--type', type]);
      assert.deepEqual(
        rows.map((s: { id: number; type: string }) => [s.id, s.type]),
        [[ids[type], type]],
      );
    }
  });

  test('show: each type with the fields it has; -o json is GET /api/v1/instances/{id}', async () => {
    for (const type of ['vps', 'baremetal', 'game', 'web'] as const) {
      const id = ids[type];
      const shown = await okJson(['instances', 'show', String(id)]);
      const api = (await owner.call('GET', `/api/v1/instances/${id}`)).json().instance;
      const { power: _a, ...mine } = shown;
      const { power: _b, ...theirs } = api;
      assert.deepEqual(mine, theirs, `${type}: the API's object`);
      assert.equal(shown.type, type);

      const table = ok(await hostplane(['instances', 'show', String(id)])).stdout;
      assert.match(table, new RegExp(`^id\\s+${id}$`, 'm'));
      assert.match(table, new RegExp(`^type\\s+${type}$`, 'm'));
      assert.match(table, /^status\s+active$/m);
      if (type === 'web') {
        assert.match(table, /^domain\s+cli-shop\.example\.in$/m);
        assert.doesNotMatch(table, /^power/m);
      } else {
        assert.match(table, /^power\s+\S+$/m);
      }
      if (shown.credentials) {
        assert.equal(table.includes(shown.credentials.password), false, `${type}: the password only when asked`);
        assert.ok(
          ok(await hostplane(['instances', 'show', String(id), '--show-password'])).stdout.includes(
            shown.credentials.password,
          ),
        );
      }
    }
    const vps = ok(await hostplane(['instances', 'show', String(ids.vps)])).stdout;
    assert.match(vps, /^memory\s+\S+ GiB \/ \S+ GiB$/m, 'live figures of a running VPS');
  });
});

describe('game power through /api/v1/instances/{id}/{action}', () => {
  const runtime = () => {
    const server = panelServer(u, ids.game);
    return u.ptero?.state.runtime.get(server.id)?.state ?? 'offline';
  };

  test('start, stop, restart and kill reach the Pterodactyl panel', async () => {
    // The EULA accepted first, as the panel's eula_accept does (else the server stops as it boots).
    const ptero = u.ptero;
    assert.ok(ptero);
    writeFile(ptero.state.treeOf(panelServer(u, ids.game).id), 'eula.txt', Buffer.from('eula=true\n'));
    const started = await okJson(['instances', 'power', String(ids.game), 'start']);
    assert.equal(started.status, 'succeeded', JSON.stringify(started.error));
    await waitFor('the panel runs the server', async () => runtime() === 'running', WAIT);

    const stop = ok(await hostplane(['instances', 'power', String(ids.game), 'stop']));
    assert.match(stop.stdout, new RegExp(`Instance ${ids.game}: stop done`));
    await waitFor('the panel stopped it', async () => runtime() === 'offline', WAIT);

    ok(await hostplane(['instances', 'power', String(ids.game), 'restart']));
    await waitFor('running again', async () => runtime() === 'running', WAIT);

    const kill = await okJson(['instances', 'power', String(ids.game), 'kill']);
    assert.equal(kill.type, 'power');
    assert.equal(kill.resource.id, ids.game);
    await waitFor('killed', async () => runtime() === 'offline', WAIT);
  });

  test("a KVM-only action on a game server: exit 1, the API's answer and what a game server takes", async () => {
    const r = await hostplane(['instances', 'power', String(ids.game), 'reboot']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /not_owner, HTTP 404/);
    assert.match(r.stderr, /a game server takes start, stop, restart or kill/);
  });
});

describe('search, billing, webhooks', () => {
  test('search: a table of matches; -o json is {q, kind, took_ms, groups}', async () => {
    const table = ok(await hostplane(['search', 'p-game'])).stdout;
    assert.match(table, /^TYPE\s+ID\s+TITLE\s+URL$/m);
    assert.match(table, new RegExp(`^service\\s+service:${ids.game}\\s+.*p-game.*\\s+http`, 'm'));
    const result = await okJson(['search', 'p-game']);
    assert.deepEqual(Object.keys(result).sort(), ['groups', 'kind', 'q', 'took_ms']);
    assert.equal(result.q, 'p-game');
    const services = result.groups.find((g: { type: string }) => g.type === 'service');
    assert.ok(services.items.some((i: { id: string }) => i.id === `service:${ids.game}`));
    // Several words are one query; --type keeps one group.
    const web = await okJson(['search', 'cli-shop.example.in', '--type', 'service']);
    assert.ok(web.groups.every((g: { type: string }) => g.type === 'service'));
    assert.ok(web.groups[0].items.some((i: { id: string }) => i.id === `service:${ids.web}`));
    const none = ok(await hostplane(['search', 'no-such-thing-here']));
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /Nothing matches no-such-thing-here/);
  });

  test('billing: balance, run-rate and the next renewals; -o json is GET /api/v1/billing', async () => {
    const table = ok(await hostplane(['billing'])).stdout;
    assert.match(table, /^balance\s+₹\d+\.\d\d$/m);
    assert.match(table, /^monthly run-rate\s+₹\d+\.\d\d$/m);
    assert.match(table, /^RENEWS\s+INSTANCE\s+AMOUNT$/m);
    assert.match(table, new RegExp(`\\s${ids.game} p-game\\s+₹`));
    const billing = await okJson(['billing']);
    const api = (await owner.call('GET', '/api/v1/billing')).json();
    assert.deepEqual(billing, api);
  });

  test('webhooks list: the endpoints (never a secret); a token without read is refused', async () => {
    assert.equal(ok(await hostplane(['webhooks', 'list'])).stderr.includes('No webhook endpoints'), true);
    assert.deepEqual(await okJson(['webhooks', 'list']), []);
    await u.t.deps.webhooks.create(owner.accountId, {
      url: 'https://hooks.example.com/hostplane',
      events: ['order.paid', 'service.active'],
      description: 'ops',
    });
    const table = ok(await hostplane(['webhooks'])).stdout;
    assert.match(table, /^ID\s+URL\s+EVENTS\s+STATE\s+SECRET\s+DESCRIPTION$/m);
    assert.match(
      table,
      /^\d+\s+https:\/\/hooks\.example\.com\/hostplane\s+order\.paid,service\.active\s+enabled\s+whsec_\S*…\s+ops$/m,
    );
    const [endpoint] = await okJson(['webhooks', 'list']);
    assert.equal(endpoint.url, 'https://hooks.example.com/hostplane');
    assert.equal('secret' in endpoint, false);
    const api = (await owner.call('GET', '/api/v1/webhooks')).json();
    assert.deepEqual([endpoint], api.endpoints);
    assert.ok(api.event_types.includes('order.paid'));

    const billingOnly = await apiClient(u.t, ['billing.read'], '0', owner.accountId);
    const refused = await hostplane(['webhooks', 'list', '-o', 'json'], billingOnly.secret);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.equal(JSON.parse(refused.stderr).error.code, 'insufficient_scope');
  });
});

describe('completion scripts', () => {
  /** A PATH where `hostplane` is the workspace's bin (what the bash and zsh scripts call). */
  const PATH = [join(ROOT, 'node_modules/.bin'), dirname(process.execPath), process.env.PATH ?? ''].join(':');
  const script = async (shell: string) => {
    const text = ok(await hostplane(['completion', shell])).stdout;
    const file = join(dir, `hostplane.${shell}`);
    writeFileSync(file, text);
    return file;
  };
  const sh = (shell: string, args: string[]) =>
    spawnSync(shell, args, { encoding: 'utf8', env: { PATH, HOME: dir }, timeout: 60_000 });

  test('bash: valid, and hostplane inst<TAB> completes to instances', async () => {
    const file = await script('bash');
    const syntax = sh('bash', ['-n', file]);
    assert.equal(syntax.status, 0, syntax.stderr);
    const r = sh('bash', [
      '-c',
      `source ${file}; COMP_WORDS=(hostplane inst); COMP_CWORD=1; _hostplane_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['instances']);
    const sub = sh('bash', [
      '-c',
      `source ${file}; COMP_WORDS=(hostplane instances power 1 re); COMP_CWORD=4; _hostplane_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    assert.deepEqual(sub.stdout.trim().split('\n').sort(), ['reboot', 'restart']);
  });

  test('zsh: valid, and the completion function offers instances with its description', async (t) => {
    if (!has('zsh')) return t.skip('zsh is not installed (apt-get install zsh to run this test)');
    const file = await script('zsh');
    const syntax = sh('zsh', ['-n', file]);
    assert.equal(syntax.status, 0, syntax.stderr);
    // compdef and _describe stand in for the completion system: _describe prints what it is given.
    const r = sh('zsh', [
      '-f',
      '-c',
      `compdef() {}; _describe() { print -l -- "\${(@P)2}"; }; _default() {}; source ${file}; ` +
        `words=(hostplane inst); CURRENT=2; BUFFER='hostplane inst'; CURSOR=14; _hostplane_yargs_completions`,
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^instances:Your services/m);
  });

  test('fish: valid, made from the command table; hostplane inst<TAB> completes to instances', async (t) => {
    if (!has('fish')) return t.skip('fish is not installed (apt-get install fish to run this test)');
    const file = await script('fish');
    const syntax = sh('fish', ['-n', file]);
    assert.equal(syntax.status, 0, syntax.stderr);
    const complete = (line: string) =>
      sh('fish', ['--no-config', '-c', `source ${file}; complete -C '${line}'`])
        .stdout.trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
    assert.deepEqual(complete('hostplane inst'), ['instances']);
    assert.deepEqual(complete('hostplane -o json instances p'), ['power']);
    assert.deepEqual(complete('hostplane completion '), ['bash', 'fish', 'zsh']);
    assert.deepEqual(complete('hostplane instances list --type '), ['baremetal', 'game', 'kvm', 'vps', 'web']);
    // Every command yargs completes (its own table) is in the fish script, and every subcommand.
    const top = ok(await hostplane(['--get-yargs-completions', 'hostplane', '']))
      .stdout.trim()
      .split('\n');
    assert.deepEqual(complete('hostplane ').sort(), top.filter((w) => !w.startsWith('-')).sort());
    for (const command of ['instances', 'webhooks', 'invoices', 'ssh-keys']) {
      const subs = ok(await hostplane(['--get-yargs-completions', 'hostplane', command, '']))
        .stdout.trim()
        .split('\n');
      assert.deepEqual(
        complete(`hostplane ${command} `).sort(),
        subs.filter((w) => !w.startsWith('-')).sort(),
        command,
      );
    }
  });

  test('completion -o json: the script as data; a shell it does not know is exit 2', async () => {
    const out = await okJson(['completion', 'fish']);
    assert.equal(out.shell, 'fish');
    assert.match(out.script, /complete -c hostplane/);
    const bad = await hostplane(['completion', 'tcsh']);
    assert.equal(bad.code, 2);
  });
});

describe('-o json errors and bad usage', () => {
  test('a bad argument exits 2 with a usage message; with -o json the error is JSON on stderr', async () => {
    for (const args of [
      ['instances', 'list', '--type', 'potato'],
      ['instances', 'power', String(ids.game), 'explode'],
      ['search'],
      ['search', 'x', '--limit', '500'],
      ['webhooks', 'frobnicate'],
    ]) {
      const r = await hostplane(args);
      assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
      assert.match(r.stderr, /Run `hostplane --help` for usage\./, args.join(' '));
      assert.equal(r.stdout, '');
      const j = await hostplane([...args, '-o', 'json']);
      assert.equal(j.code, 2, j.stderr);
      assert.equal(j.stdout, '');
      const e = JSON.parse(j.stderr).error;
      assert.equal(e.code, 'bad_usage');
      assert.equal(typeof e.message, 'string');
      assert.equal(e.status, 0);
    }
  });

  test('an API error with -o json: the envelope on stderr, exit 1', async () => {
    const r = await hostplane(['instances', 'show', '987654', '-o', 'json']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(JSON.parse(r.stderr).error.code, 'not_owner');
    const failed = await hostplane(['invoices', 'show', 'HP/0000/999999', '-o', 'json']);
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(JSON.parse(failed.stderr).error.code, 'failed');
  });
});
