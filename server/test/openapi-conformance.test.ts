// The document says what the server does (issue 32). Every answer a test receives through the
// harness is checked against the served OpenAPI document (support/openapi-validate.ts): here,
// that the check itself catches what it must, and the places where a conformance run (Prism)
// found the document and the server apart.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from 'typebox';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { type DocumentValidator, validatorFor } from './support/openapi-validate.ts';
import { apiClient } from './support/rest.ts';
import { multipart, PNG } from './support/uploads.ts';

interface Operation {
  operationId: string;
  requestBody?: { required?: boolean };
  parameters?: unknown[];
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface Document {
  info: { license?: { name: string } };
  paths: Record<string, Record<string, Operation>>;
}

let t: TestApp;
let doc: Document;
let check: DocumentValidator;
before(async () => {
  t = await createTestApp({
    // Two routes that break their own documentation, for the check to catch.
    extend: (app) => {
      const schema = (operationId: string) => ({
        operationId,
        security: [],
        response: { 200: Type.Object({ ok: Type.Literal(true), n: Type.Integer() }) },
      });
      // In a plugin, as the surfaces are, so the document sees them.
      app.register(async (scope) => {
        scope.get('/api/v1/conformance/status', { schema: schema('conformanceStatus') }, async (_request, reply) =>
          reply.code(202 as 200).send({ ok: true, n: 1 }),
        );
        scope.get('/api/v1/conformance/body', { schema: schema('conformanceBody') }, async (_request, reply) =>
          reply.type('application/json; charset=utf-8').send('{"ok":true,"n":"one"}'),
        );
      });
    },
  });
  const res = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  doc = res.json() as Document;
  check = validatorFor(res.body);
});
after(() => t.close());

const json = (body: unknown) => ({ contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) });
const plans = { method: 'GET', url: '/api/v1/plans' };
const operation = (path: string, method: string) => doc.paths[path]?.[method] as Operation;

describe('the response check', () => {
  test('t.inject fails the test when a status is not listed or a body does not match, naming the operation', async () => {
    await assert.rejects(t.inject({ method: 'GET', url: '/api/v1/conformance/status' }), (error: Error) => {
      assert.equal(error.name, 'AssertionError');
      assert.match(error.message, /conformanceStatus \(GET \/api\/v1\/conformance\/status\) answered 202/);
      return true;
    });
    await assert.rejects(t.inject({ method: 'GET', url: '/api/v1/conformance/body' }), (error: Error) => {
      assert.match(error.message, /conformanceBody .* 200: the body does not match/);
      assert.match(error.message, /\/n must be integer/);
      return true;
    });
  });

  test('a status, a body or a media type the document does not have is named', () => {
    const ok = { ok: true, plans: [] };
    assert.equal(check.problem({ ...plans, statusCode: 200, ...json(ok) }), null);
    assert.match(String(check.problem({ ...plans, statusCode: 418, ...json(ok) })), /listPlans .* answered 418/);
    assert.match(
      String(check.problem({ ...plans, statusCode: 200, ...json({ ok: true }) })),
      /must have required property 'plans'/,
    );
    assert.match(
      String(check.problem({ ...plans, statusCode: 200, contentType: 'text/plain', body: 'x' })),
      /Content-Type text\/plain is not listed/,
    );
  });

  test('a path matches its template with or without the trailing slash; literal segments before parameters', () => {
    for (const url of ['/api/v1/client/account/', '/api/v1/client/account', '/api/v1/client/account/?x=1']) {
      assert.match(String(check.problem({ method: 'GET', url, statusCode: 418, ...json({}) })), /getAccount/, url);
    }
    const stats = check.problem({ method: 'GET', url: '/api/v1/instances/7/stats', statusCode: 418, ...json({}) });
    assert.match(String(stats), /getInstanceStats/);
  });

  test('pages outside the document are not checked; an unknown API route may only refuse, in an envelope', () => {
    for (const url of ['/docs', '/docs/static/index.html', '/verify', '/reset?token=x', '/metrics', '/ws/console/']) {
      assert.equal(check.problem({ method: 'GET', url, statusCode: 200, contentType: 'text/html', body: '<p>' }), null);
    }
    const refusal = { ok: false, error: 'not_found', status: 404, message: 'No route.', request_id: 'r' };
    const unknown = { method: 'GET', url: '/api/v1/no/such/route' };
    assert.equal(check.problem({ ...unknown, statusCode: 404, ...json(refusal) }), null);
    assert.match(String(check.problem({ ...unknown, statusCode: 200, ...json({ ok: true }) })), /not in the document/);
    assert.match(String(check.problem({ ...unknown, statusCode: 404, ...json({ nope: 1 }) })), /error envelopes/);
  });

  test('answers sent over a real socket are checked too, and fail close()', async () => {
    const other = await createTestApp({
      extend: (app) => {
        app.register(async (scope) => {
          scope.get(
            '/api/v1/conformance/socket',
            { schema: { operationId: 'conformanceSocket', security: [], response: { 200: Type.Object({}) } } },
            async (_request, reply) => reply.code(201 as 200).send({}),
          );
        });
      },
    });
    const address = await other.app.listen({ port: 0, host: '127.0.0.1' });
    assert.equal((await fetch(`${address}/api/v1/conformance/socket`)).status, 201);
    await assert.rejects(other.close(), /conformanceSocket .* answered 201/);
  });
});

describe('where the document and the server disagreed (Prism)', () => {
  test('search is documented at /api/v1/search/, as served, and a token gets the token envelope', async () => {
    assert.ok(operation('/api/v1/search/', 'get'));
    assert.equal(doc.paths['/api/v1/search'], undefined);
    const api = await apiClient(t, ['read']);
    const token = await api.call('GET', '/api/v1/search/?q=x');
    assert.equal(token.statusCode, 200);
    assert.equal(token.json().ok, true);
    const bad = await api.call('GET', '/api/v1/search/?q=colour:red');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().ok, false);
    const { browser } = await signedInBrowser(t, freshIp());
    const session = await browser.get('/api/v1/search?q=x');
    assert.equal(session.json().success, true);
  });

  test("a deposit's proof is answered as the image (or PDF) it is, a media type the document lists", async () => {
    const content = operation('/api/v1/client/wallet/deposit/', 'get').responses['200']?.content ?? {};
    assert.deepEqual(Object.keys(content).sort(), [
      'application/json',
      'application/pdf',
      'image/jpeg',
      'image/png',
      'image/webp',
    ]);
    const { browser } = await signedInBrowser(t, freshIp());
    const form = multipart({ amount: '100', txn_ref: `UTR${Date.now()}`, csrf_token: browser.csrfToken as string }, [
      { field: 'screenshot', filename: 'proof.png', contentType: 'image/png', data: PNG },
    ]);
    const sent = await browser.request('POST', '/api/v1/client/wallet/deposit/', {
      body: form.body,
      headers: { 'content-type': form.contentType },
    });
    assert.equal(sent.statusCode, 201, sent.body);
    const proof = await browser.get(`/api/v1/client/wallet/deposit/?id=${sent.json().deposit.id}&action=screenshot`);
    assert.equal(proof.statusCode, 200);
    assert.equal(proof.headers['content-type'], 'image/png');
    assert.deepEqual(proof.rawPayload, PNG);
  });

  test('stats list 422 (not_supported: a product without live figures)', () => {
    assert.ok(operation('/api/v1/instances/{id}/stats', 'get').responses['422']);
    const refusal = {
      ok: false,
      error: 'not_supported',
      status: 422,
      message: 'Web hosting has no live figures.',
      request_id: 'r',
    };
    const url = '/api/v1/instances/3/stats';
    assert.equal(check.problem({ method: 'GET', url, statusCode: 422, ...json(refusal) }), null);
  });

  test('game reads (file_read, file_download) list 400 path_traversal, as the mutations do', () => {
    for (const type of ['game', 'web', 'vps']) {
      assert.ok(operation(`/api/v1/client/${type}/`, 'get').responses['400'], type);
    }
  });

  test('POST /instances/{id}/{action} takes no body: a bare POST is a request the document allows', async () => {
    assert.equal(operation('/api/v1/instances/{id}/{action}', 'post').requestBody?.required, false);
    assert.equal(operation('/api/v1/instances', 'post').requestBody?.required, true);
    assert.equal(operation('/cloud/v1/instances/{id}/power', 'post').requestBody?.required, true);
    const api = await apiClient(t);
    const bare = await api.call('POST', '/api/v1/instances/999999/start');
    assert.equal(bare.statusCode, 404, bare.body);
    assert.equal(bare.json().error, 'not_owner');
  });

  test("the plumbing's refusals are listed wherever it makes them (parsing, size, media type, CSRF, schemas)", () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (path === '/api/v1/health/') continue;
        const listed = Object.keys(op.responses);
        const expected: string[] = [];
        if (method !== 'get') expected.push('400', '413', '415');
        if (method !== 'get' && path.startsWith('/api/v1/client/')) expected.push('403');
        if (path.includes('{')) expected.push('400');
        if (op.requestBody || (op.parameters ?? []).length > 0) expected.push('422');
        for (const status of expected) assert.ok(listed.includes(status), `${method} ${path} lists ${status}`);
      }
    }
  });

  test('the document has a licence, and health a 4xx', () => {
    assert.ok(doc.info.license?.name);
    const health = operation('/api/v1/health/', 'get');
    assert.ok(Object.keys(health.responses).some((status) => /^4/.test(status)));
  });
});
