// The shared HTTP plumbing: envelopes per surface, request ids, body parser refusals,
// validation, unknown routes and failures that must never leak internals.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from 'typebox';
import { AppError } from '../src/core/errors.ts';
import { createTurnBatch } from '../src/http/turn-batch.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { waitFor } from './support/wait.ts';

let t: TestApp;

before(async () => {
  t = await createTestApp({
    // Probe routes are hidden from the OpenAPI document (documented routes need an operationId).
    extend(app) {
      const body = Type.Object(
        {
          name: Type.String({ minLength: 2 }),
          count: Type.Integer({ minimum: 1 }),
          email: Type.String({ format: 'email' }),
          action: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('read_all')])),
          note: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      );
      // A route whose core applies its own value rules to a field the schema only types.
      app.post(
        '/api/v1/client/probe-rules/',
        {
          config: {
            fieldRules: (b: Record<string, unknown>): Record<string, string> =>
              typeof b.note === 'string' && b.note.length < 5 ? { note: 'must be 5+ characters' } : {},
          },
          schema: { hide: true, body },
        },
        async (request) => ({ echoed: request.body }),
      );
      for (const prefix of ['/api/v1/client/probe/', '/api/v1/probe', '/cloud/v1/probe']) {
        app.post(prefix, { schema: { hide: true, body } }, async (request) => ({ echoed: request.body }));
        app.get(`${prefix.replace(/\/$/, '')}/boom`, { schema: { hide: true } }, async () => {
          throw new Error('SELECT secret FROM internals -- stack detail');
        });
        app.get(`${prefix.replace(/\/$/, '')}/refused`, { schema: { hide: true } }, async () => {
          throw new AppError('locked_out', { retryAfter: 42 });
        });
        // What node-postgres throws when PostgreSQL aborts a transaction for another one's sake.
        app.get(`${prefix.replace(/\/$/, '')}/aborted/:code`, { schema: { hide: true } }, async (request) => {
          const { code } = request.params as { code: string };
          throw Object.assign(new Error(code === '40P01' ? 'deadlock detected' : 'could not serialize access'), {
            name: 'error',
            severity: 'ERROR',
            code,
          });
        });
        // What node-postgres and its pool throw when the database is away (db/unavailable.ts).
        app.get(`${prefix.replace(/\/$/, '')}/away/:kind`, { schema: { hide: true } }, async (request) => {
          const { kind } = request.params as { kind: keyof typeof AWAY };
          throw AWAY[kind]();
        });
      }
    },
  });
});
after(() => t.close());

const AWAY = {
  shutdown: () =>
    Object.assign(new Error('terminating connection due to administrator command'), {
      name: 'error',
      severity: 'FATAL',
      code: '57P01',
    }),
  starting: () => Object.assign(new Error('the database system is starting up'), { severity: 'FATAL', code: '57P03' }),
  refused: () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
  terminated: () => new Error('Connection terminated unexpectedly'),
  pool: () => new Error('timeout exceeded when trying to connect'),
  wrapped: () => new Error('rollback failed', { cause: new Error('Connection terminated unexpectedly') }),
  // The database's own disk full (issue 39's disk drill left it a 500): nothing the client sent was wrong.
  diskFull: () =>
    Object.assign(new Error('could not extend file "base/16384/16397": No space left on device'), {
      severity: 'ERROR',
      code: '53100',
    }),
};

const json = { 'content-type': 'application/json' };

describe('envelopes', () => {
  test('unknown route on the token surface: 404 in the token envelope', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    const body = res.json();
    assert.equal(body.ok, false);
    assert.equal(body.error, 'not_found');
    assert.equal(body.status, 404);
    assert.equal(body.request_id, res.headers['x-request-id']);
  });

  test('unknown route on the session surface: 404 in the session envelope', async () => {
    for (const url of ['/api/v1/client/nothing/', '/api/v1/client/nothing', '/api/v1/search/x']) {
      const res = await t.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), {
        success: false,
        message: res.json().message,
        code: 'not_found',
        errors: {},
      });
    }
  });

  test('tickets and DNS routes are 404 in the token envelope', async () => {
    for (const url of ['/api/v1/tickets', '/api/v1/dns/zones']) {
      const res = await t.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error, 'not_found');
    }
  });

  test('an AppError keeps its status, code and Retry-After', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/client/probe/refused' });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '42');
    assert.equal(res.json().code, 'locked_out');
  });

  test('an unexpected failure is a bare 500, logged with its detail but never echoed', async () => {
    for (const url of ['/api/v1/probe/boom', '/api/v1/client/probe/boom']) {
      const res = await t.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 500);
      assert.doesNotMatch(res.body, /SELECT|stack|internals|at .*\.ts/);
    }
    assert.match(t.logs.text(), /SELECT secret FROM internals/);
  });

  test("a failure's log lines carry the request's id (the request logger is made when first used)", async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/probe/boom', headers: { 'x-request-id': 'boom-42' } });
    assert.equal(res.statusCode, 500);
    const lines = t.logs.parsed().filter((line) => line.reqId === 'boom-42');
    assert.ok(
      lines.some((line) => line.msg === 'request failed' && line.service === 'hostplane'),
      JSON.stringify(lines),
    );
    assert.ok(lines.some((line) => (line.res as { statusCode?: number } | undefined)?.statusCode === 500));
  });
});

describe('transactions the database aborted', () => {
  for (const code of ['40P01', '40001'])
    test(`${code} (${code === '40P01' ? 'deadlock' : 'serialization failure'}): 409 conflict in each envelope, not a 500; logged as a warning`, async () => {
      for (const prefix of ['/api/v1/client/probe', '/api/v1/probe', '/cloud/v1/probe']) {
        const res = await t.inject({ method: 'GET', url: `${prefix}/aborted/${code}` });
        assert.equal(res.statusCode, 409, `${prefix}: ${res.body}`);
        const body = res.json();
        const error = body.error ?? body.code;
        assert.ok(error === 'conflict' || body.code === 'conflict', `${prefix}: ${res.body}`);
        assert.doesNotMatch(res.body, /deadlock|serializ/);
      }
      const warned = t.logs
        .parsed()
        .filter((r) => r.msg === 'request aborted by the database; answered 409' && r.level === 40);
      assert.ok(warned.length >= 3, 'each one logged');
    });
});

describe('the database away', () => {
  test('a lost or refused connection is 503 service_unavailable with Retry-After in each envelope; a warning, not an error', async () => {
    for (const kind of Object.keys(AWAY)) {
      for (const prefix of ['/api/v1/client/probe', '/api/v1/probe', '/cloud/v1/probe']) {
        const res = await t.inject({ method: 'GET', url: `${prefix}/away/${kind}` });
        assert.equal(res.statusCode, 503, `${kind} ${prefix}: ${res.body}`);
        assert.ok(Number(res.headers['retry-after']) > 0);
        const body = res.json();
        assert.equal(body.error ?? body.code, 'service_unavailable', `${kind} ${prefix}: ${res.body}`);
        assert.doesNotMatch(res.body, /5432|terminat|ECONN|administrator|timeout/);
      }
    }
    const lines = t.logs.parsed().filter((r) => r.msg === 'request failed: database unavailable');
    assert.equal(lines.length, Object.keys(AWAY).length * 3);
    assert.ok(lines.every((r) => r.level === 40));
  });
});

describe('request ids', () => {
  test('every response carries X-Request-Id, a sane incoming one is kept', async () => {
    const minted = await t.inject({ method: 'GET', url: '/api/v1/health/' });
    assert.match(String(minted.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const kept = await t.inject({ method: 'GET', url: '/api/v1/nothing', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(kept.headers['x-request-id'], 'abc-123');
    const replaced = await t.inject({
      method: 'GET',
      url: '/api/v1/nothing',
      headers: { 'x-request-id': 'bad id\n<script>' },
    });
    assert.notEqual(replaced.headers['x-request-id'], 'bad id\n<script>');
  });
});

describe('answers leave at the end of the turn', () => {
  test('what is queued in one turn runs together after its I/O, in order; later queues go to the next turn', async () => {
    const errors: unknown[] = [];
    const atTurnEnd = createTurnBatch((error) => errors.push(error));
    const seen: string[] = [];
    const turnEnded = new Promise<void>((resolve) => {
      atTurnEnd(() => seen.push('a'));
      // A callback of the same turn's check phase queued between the two: one check-phase callback
      // per answer (setImmediate each) would run it between them.
      setImmediate(() => {
        seen.push('other');
        resolve();
      });
      atTurnEnd(() => {
        seen.push('b');
        atTurnEnd(() => seen.push('queued while running'));
      });
      atTurnEnd(() => {
        throw new Error('broken answer');
      });
      atTurnEnd(() => seen.push('c'));
      assert.deepEqual(seen, [], 'nothing runs in the turn that queued it');
    });
    await turnEnded;
    assert.deepEqual(seen, ['a', 'b', 'c', 'other'], 'one that throws does not stop the others');
    assert.equal((errors[0] as Error).message, 'broken answer');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.at(-1), 'queued while running');
  });

  test('requests handled together each get their own answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.inject({
          method: 'GET',
          url: i % 2 === 0 ? '/api/v1/health/' : '/api/v1/nothing',
          headers: { 'x-request-id': `turn-${i}` },
        }),
      ),
    );
    answers.forEach((answer, i) => {
      assert.equal(answer.headers['x-request-id'], `turn-${i}`);
      assert.equal(answer.statusCode, i % 2 === 0 ? 200 : 404);
      assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    });
  });
});

describe('bodies', () => {
  test('malformed JSON is 400 malformed_json in each envelope', async () => {
    const token = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: json, payload: '{"name": ' });
    assert.equal(token.statusCode, 400);
    assert.equal(token.json().error, 'malformed_json');
    const session = await t.inject({ method: 'POST', url: '/api/v1/client/probe/', headers: json, payload: '{bad' });
    assert.equal(session.statusCode, 400);
    assert.equal(session.json().code, 'malformed_json');
    assert.equal(session.json().success, false);
  });

  test('an empty JSON body is 400, a prototype-poisoning body is refused', async () => {
    const empty = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: json, payload: '' });
    assert.equal(empty.statusCode, 400);
    const proto = await t.inject({
      method: 'POST',
      url: '/api/v1/probe',
      headers: json,
      payload: '{"name":"ab","count":1,"email":"a@b.co","__proto__":{"polluted":true}}',
    });
    assert.equal(proto.statusCode, 400);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('a body over 1 MiB is 413 in the envelope, with or without Content-Length', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), count: 1, email: 'a@b.co' });
    const res = await t.inject({ method: 'POST', url: '/api/v1/client/probe', headers: json, payload: big });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().code, 'payload_too_large');
    const streamed = await t.inject({
      method: 'POST',
      url: '/api/v1/probe',
      headers: { ...json, 'transfer-encoding': 'chunked' },
      payload: big,
    });
    assert.equal(streamed.statusCode, 413);
    assert.equal(streamed.json().error, 'payload_too_large');
  });

  test('a wrong content type is 415', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/probe',
      headers: { 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().error, 'unsupported_media_type');
  });

  test('validation reports every failing field together, with no coercion of body types', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/client/probe/',
      headers: json,
      payload: { name: 'x', count: '5', email: 'not-an-email', role: 'admin' },
    });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.code, 'validation_failed');
    assert.deepEqual(Object.keys(body.errors).sort(), ['count', 'email', 'name', 'role']);
    const missing = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: json, payload: {} });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(Object.keys(missing.json().details.fields).sort(), ['count', 'email', 'name']);
    const notObject = await t.inject({ method: 'POST', url: '/api/v1/probe', headers: json, payload: '[1,2]' });
    assert.equal(notObject.statusCode, 422);
    assert.equal(notObject.json().details.fields.body, 'must be a JSON object');
  });

  test('integers are database integers, strings hold no NUL, a choice names its options', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/client/probe/',
      headers: json,
      payload: { name: 'ab\u0000c', count: 2_147_483_648, email: 'a@example.in', action: 'nope' },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().errors, {
      name: 'must not contain NUL characters',
      count: 'must be <= 2147483647',
      action: 'must be one of read, read_all',
    });
  });

  test('the schema and the route’s own rules report together', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/client/probe-rules/',
      headers: json,
      payload: { name: 5, count: 1, email: 'a@example.in', note: 'abc' },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().errors, { name: 'must be string', note: 'must be 5+ characters' });
  });

  test('a URL that does not decode is 400 in the envelope, with a request id', async () => {
    for (const [url, envelope] of [
      ['/api/v1/client/account/%', 'success'],
      ['/api/v1/instances/%E0%A4%A', 'ok'],
    ] as const) {
      const res = await t.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json()[envelope], false, url);
      assert.ok(res.headers['x-request-id'], url);
    }
  });

  test('headers too large for the parser: 431 with both envelopes’ fields, over a real socket', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/client/account/`, {
      headers: { 'x-filler': 'a'.repeat(20_000) },
    });
    assert.equal(res.status, 431);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.ok, false);
    assert.equal(body.success, false);
    assert.equal(body.code, 'headers_too_large');
    assert.ok(res.headers.get('x-request-id'));
  });

  test('a valid body passes, on the second token surface too', async () => {
    const payload = { name: 'ok', count: 2, email: 'a@b.co' };
    for (const url of ['/api/v1/probe', '/cloud/v1/probe/', '/api/v1/client/probe']) {
      const res = await t.inject({ method: 'POST', url, headers: json, payload });
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(res.json().echoed, payload);
    }
  });
});

describe('logs', () => {
  test('authorization, cookies and secret query values are redacted', async () => {
    await t.inject({
      method: 'GET',
      url: '/api/v1/nothing?token=CANARY-QUERY-1&keep=visible',
      headers: { authorization: 'Bearer svc_CANARY-HEADER-2', cookie: 'SVCSESSID=CANARY-COOKIE-3' },
    });
    // The access-log line is written once the answer has left (onResponse): wait for it.
    const text = await waitFor('the access-log line', async () => /keep=visible/.test(t.logs.text()) && t.logs.text());
    assert.doesNotMatch(text, /CANARY/);
  });
});
