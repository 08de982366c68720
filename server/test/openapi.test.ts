import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

describe('OpenAPI', () => {
  test('GET /api/v1/openapi.json is an OpenAPI 3.1 document of the routes', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Hostplane API');
    assert.ok(doc.paths['/api/v1/health/'].get, 'health is documented');
    assert.ok(doc.components.schemas.TokenError && doc.components.schemas.SessionError);
    assert.equal(doc.paths['/api/v1/openapi.json'], undefined, 'the document itself is hidden');
    assert.ok(doc.components.securitySchemes.bearer);
  });

  test('/docs serves the browsable page', async () => {
    const res = await t.inject({ method: 'GET', url: '/docs' });
    assert.ok([200, 302].includes(res.statusCode));
    const page = res.statusCode === 302 ? await t.inject({ method: 'GET', url: String(res.headers.location) }) : res;
    assert.match(page.body, /swagger/i);
  });
});
