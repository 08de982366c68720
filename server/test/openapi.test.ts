import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { JOB_TYPES } from '../src/db/tables.ts';
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

  test('job types and live figures: every job type listed; what bare metal cannot know may be null', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const ok = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema;
    const ajv = new Ajv2020({ strict: false });
    // CommonJS with a default export (as in src/http/plugins/validation.ts).
    (formats as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
    for (const path of ['/api/v1/jobs/{id}', '/cloud/v1/jobs/{id}']) {
      const type = ok(path).properties.job.properties.type;
      assert.deepEqual(
        type.anyOf.flatMap((branch: { enum: string[] }) => branch.enum),
        [...JOB_TYPES],
        path,
      );
    }
    const job = {
      id: 1,
      type: 'snapshot',
      status: 'queued',
      progress: 0,
      step: null,
      error: null,
      created_at: '2026-11-23T10:00:00.000+00:00',
      started_at: null,
      finished_at: null,
      resource: { type: 'service', id: 1 },
    };
    assert.ok(ajv.validate(ok('/cloud/v1/jobs/{id}'), { ok: true, job }), ajv.errorsText());
    assert.ok(!ajv.validate(ok('/cloud/v1/jobs/{id}'), { ok: true, job: { ...job, type: 'backup' } }));
    const metal = { power: 'running', cpu: null, cpus: 2, memory: { used_bytes: null, total_bytes: 1 } };
    assert.ok(
      ajv.validate(ok('/api/v1/instances/{id}/stats'), { ok: true, stats: { ...metal, uptime_seconds: null } }),
      ajv.errorsText(),
    );
    const status = {
      ...metal,
      disk: { total_bytes: 1 },
      uptime_seconds: null,
      network: { in_bytes: null, out_bytes: null },
    };
    assert.ok(
      ajv.validate(ok('/api/v1/client/services/status/'), { success: true, message: 'x', id: 1, status }),
      ajv.errorsText(),
    );
  });

  test('/docs serves the browsable page', async () => {
    const res = await t.inject({ method: 'GET', url: '/docs' });
    assert.ok([200, 302].includes(res.statusCode));
    const page = res.statusCode === 302 ? await t.inject({ method: 'GET', url: String(res.headers.location) }) : res;
    assert.match(page.body, /swagger/i);
  });
});
