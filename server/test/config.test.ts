// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createProductRegistry } from '../src/core/product-kit/registry.ts';
import { PRODUCTS } from '../src/core/products/index.ts';
import { crashPoints, NO_CRASH_POINTS } from '../src/worker/crash-point.ts';

const key = Buffer.alloc(32, 7).toString('base64');

describe('configuration', () => {
  test('defaults: embedded, demo on, loopback, ./data', () => {
    const config = loadConfig({}, '/srv/app');
    assert.equal(config.engine, 'pglite');
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.publicUrl, 'http://localhost:8080');
    assert.equal(config.dataDir, '/srv/app/data');
    assert.equal(config.demo, true);
    assert.equal(config.altBasePath, '/cloud');
    assert.equal(config.secretKey, null);
  });

  test('PostgreSQL: engine follows DATABASE_URL, demo defaults off, SECRET_KEY required', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', SECRET_KEY: key });
    assert.equal(config.engine, 'postgresql');
    assert.equal(config.demo, false);
    assert.equal(config.secretKey?.length, 32);
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db' }), /SECRET_KEY is required/);
  });

  test('bad values are refused with a message naming each of them', () => {
    const bad = {
      PORT: 'abc',
      DATABASE_URL: 'mysql://root:hunter2@db/x',
      PUBLIC_URL: 'ftp://x',
      DEMO: 'maybe',
      TRUST_PROXY: '10.0.0.0/8, 300.1.1.1',
      SECRET_KEY: 'short',
      LOG_LEVEL: 'loud',
      ALT_BASE_PATH: 'cloud',
    };
    try {
      loadConfig(bad);
      assert.fail('should have thrown');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      for (const name of Object.keys(bad)) assert.match(error.message, new RegExp(name), name);
      assert.doesNotMatch(error.message, /hunter2/, 'passwords in URLs are not echoed');
    }
    assert.throws(() => loadConfig({ PORT: '70000' }), /PORT/);
    assert.throws(() => loadConfig({ PORT: '-1' }), /PORT/);
  });

  test('metrics: off by default; METRICS_PORT (loopback unless METRICS_HOST), METRICS_TOKEN', () => {
    const off = loadConfig({});
    assert.equal(off.metricsPort, null);
    assert.equal(off.metricsToken, null);
    assert.equal(off.metricsHost, '127.0.0.1');
    const on = loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'a-token-of-24-characters' });
    assert.equal(on.metricsPort, 9464);
    assert.equal(on.metricsHost, '127.0.0.1');
    assert.equal(on.metricsToken, 'a-token-of-24-characters');
    assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metricsHost, '0.0.0.0');
    assert.equal(loadConfig({ METRICS_PORT: '0' }).metricsPort, 0, 'any free port');
  });

  test('metrics: bad values are refused, naming the variable and never echoing the token', () => {
    const refused = (env: Record<string, string>, pattern: RegExp) =>
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
        JSON.stringify(env),
      );
    refused({ METRICS_PORT: 'nine' }, /METRICS_PORT="nine": must be a whole number/);
    refused({ METRICS_PORT: '70000' }, /METRICS_PORT/);
    refused({ PORT: '9000', METRICS_PORT: '9000' }, /METRICS_PORT="9000": must differ from PORT/);
    refused({ METRICS_HOST: '0.0.0.0' }, /METRICS_HOST="0.0.0.0": means nothing without METRICS_PORT/);
    refused({ METRICS_PORT: '9464', METRICS_HOST: 'not a host!' }, /METRICS_HOST="not a host!": must be an IP/);
    refused({ METRICS_TOKEN: 'short' }, /METRICS_TOKEN="<hidden>": must be 16–256 printable/);
    refused({ METRICS_TOKEN: 'sixteen chars or more, with spaces' }, /METRICS_TOKEN/);
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: 'tooshort1' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.doesNotMatch(error.message, /tooshort1/);
        return true;
      },
    );
  });

  test('UPI: UPI_VPA and UPI_PAYEE_NAME; a demo handle in demo mode only; a bad VPA is refused', () => {
    assert.deepEqual(loadConfig({ DEMO: '0' }).upi, null);
    assert.deepEqual(loadConfig({}).upi, { vpa: 'demo@hostplane', payeeName: 'Hostplane' });
    assert.deepEqual(
      loadConfig({ DEMO: '0', UPI_VPA: 'pay.hostplane@okaxis', UPI_PAYEE_NAME: 'Hostplane Pvt Ltd' }).upi,
      {
        vpa: 'pay.hostplane@okaxis',
        payeeName: 'Hostplane Pvt Ltd',
      },
    );
    for (const bad of ['no-at-sign', 'a@', '@bank', 'x@1bank', 'pay me@okaxis']) {
      assert.throws(() => loadConfig({ UPI_VPA: bad }), /UPI_VPA/, bad);
    }
    assert.throws(() => loadConfig({ UPI_VPA: 'a.b@upi', UPI_PAYEE_NAME: 'x'.repeat(100) }), /UPI_PAYEE_NAME/);
  });

  test('PUBLIC_URL loses its trailing slash; TRUST_PROXY keeps valid CIDRs', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://panel.example.in/', TRUST_PROXY: '10.0.0.0/8,::1' });
    assert.equal(config.publicUrl, 'https://panel.example.in');
    assert.deepEqual(config.trustProxy, ['10.0.0.0/8', '::1']);
  });

  test('HOSTPLANE_CRASH_AT: empty unless set; parsed points; refused with NODE_ENV=production, malformed or twice', () => {
    assert.deepEqual(loadConfig({}).crashAt, []);
    const set = 'vps:creating the virtual machine:after, game:settled,web:preparing:before';
    assert.deepEqual(loadConfig({ HOSTPLANE_CRASH_AT: set, NODE_ENV: 'test' }).crashAt, [
      { product: 'vps', step: 'creating the virtual machine', when: 'after' },
      { product: 'game', step: null, when: 'settled' },
      { product: 'web', step: 'preparing', when: 'before' },
    ]);
    assert.throws(
      () => loadConfig({ HOSTPLANE_CRASH_AT: 'vps:preparing:after', NODE_ENV: 'production' }),
      (error: Error) =>
        error instanceof ConfigError && /HOSTPLANE_CRASH_AT=.*refused with NODE_ENV=production/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ HOSTPLANE_CRASH_AT: 'vps:preparing' }),
      /HOSTPLANE_CRASH_AT="vps:preparing": each point/,
    );
    assert.throws(() => loadConfig({ HOSTPLANE_CRASH_AT: 'vps:settled,vps:settled' }), /named twice/);
  });

  test('HOSTPLANE_CRASH_AT: a worker refuses a product or step that does not exist; unset, nothing is wrapped', () => {
    const products = createProductRegistry(PRODUCTS);
    const crash = (value: string) => crashPoints(loadConfig({ HOSTPLANE_CRASH_AT: value }).crashAt, products);
    assert.throws(() => crash('nas:settled'), /no product nas/);
    assert.throws(() => crash('vps:installing:after'), /vps provisioning has no step "installing"/);
    assert.ok(crash('baremetal:installing the operating system:before'));
    assert.equal(crashPoints([], products), NO_CRASH_POINTS);
  });
});
