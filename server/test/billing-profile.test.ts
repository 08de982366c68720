// Billing profiles (issue 35, CONTRACT §12) on the session surface: sign-in and CSRF required,
// null until set, a valid profile stored (trimmed, GSTIN in capitals) and replaced whole, every
// field's refusal named in one 422, a GSTIN of another state refused naming gstin, and one
// account never sees another's profile.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const PROFILE = '/api/v1/client/account/billing-profile/';
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const VALID = {
  legal_name: 'Asha Traders LLP',
  address_line1: '12, MG Road',
  address_line2: 'Near Central Mall',
  city: 'Pune',
  state_code: '27',
  pincode: '411001',
  gstin: '27AAPFU0939F1ZV',
};

describe('billing profile on the session surface', () => {
  test('signed-out callers get 401; a change without the CSRF token is 403', async () => {
    const anonymous = new Browser(t, freshIp());
    await anonymous.bootstrap();
    const get = await anonymous.get(PROFILE);
    assert.equal(get.statusCode, 401, get.body);
    assert.equal(get.json().code, 'unauthenticated');
    const post = await anonymous.post(PROFILE, VALID, { csrf: true });
    assert.equal(post.statusCode, 401, post.body);

    const { browser } = await signedInBrowser(t, freshIp());
    const noCsrf = await browser.post(PROFILE, VALID, { csrf: false });
    assert.equal(noCsrf.statusCode, 403, noCsrf.body);
    assert.equal(noCsrf.json().code, 'csrf_failed');
    const wrongCsrf = await browser.post(PROFILE, VALID, { csrf: 'not-the-token' });
    assert.equal(wrongCsrf.statusCode, 403, wrongCsrf.body);
    assert.equal((await browser.get(PROFILE)).json().profile, null);
  });

  test('null until set; a valid profile is stored normalised and replaced whole', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const empty = await browser.get(PROFILE);
    assert.equal(empty.statusCode, 200, empty.body);
    assert.equal(empty.json().success, true);
    assert.equal(empty.json().profile, null);
    // The states a form offers: every GST code once, with its name, in order of name.
    const states = empty.json().states as { code: string; name: string }[];
    assert.equal(states.length, 37);
    assert.equal(new Set(states.map((s) => s.code)).size, 37);
    assert.deepEqual(
      states.find((s) => s.code === '27'),
      { code: '27', name: 'Maharashtra' },
    );
    assert.deepEqual(
      states.map((s) => s.name),
      states.map((s) => s.name).sort((a, b) => a.localeCompare(b, 'en')),
    );
    assert.equal(states[0]?.name, 'Andaman and Nicobar Islands');

    const saved = await browser.post(
      PROFILE,
      { ...VALID, legal_name: '  Asha Traders LLP ', gstin: ' 27aapfu0939f1zv ' },
      { csrf: true },
    );
    assert.equal(saved.statusCode, 200, saved.body);
    const profile = saved.json().profile;
    assert.equal(profile.legal_name, 'Asha Traders LLP');
    assert.equal(profile.gstin, '27AAPFU0939F1ZV');
    assert.equal(profile.state_name, 'Maharashtra');
    assert.match(profile.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    assert.deepEqual((await browser.get(PROFILE)).json().profile, profile);
    // Also without the trailing slash (CONTRACT §2).
    assert.deepEqual((await browser.get(PROFILE.slice(0, -1))).json().profile, profile);

    // Replaced whole: an unregistered buyer in Karnataka, no second address line, no GSTIN.
    const { address_line2: _line2, gstin: _gstin, ...rest } = VALID;
    const b2c = await browser.post(
      PROFILE,
      { ...rest, city: 'Bengaluru', state_code: '29', pincode: '560001', gstin: '' },
      { csrf: true },
    );
    assert.equal(b2c.statusCode, 200, b2c.body);
    assert.equal(b2c.json().profile.gstin, null);
    assert.equal(b2c.json().profile.address_line2, null);
    assert.equal(b2c.json().profile.state_name, 'Karnataka');
    const withNull = await browser.post(PROFILE, { ...VALID, gstin: null, address_line2: null }, { csrf: true });
    assert.equal(withNull.statusCode, 200, withNull.body);
    assert.equal(withNull.json().profile.gstin, null);
  });

  test('each bad field is named in one 422', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ legal_name: 'A' }, 'legal_name', /2–100/],
      [{ legal_name: 'x'.repeat(101) }, 'legal_name', /2–100/],
      [{ legal_name: 'Asha\u001b[31m' }, 'legal_name', /control/],
      [{ address_line1: '   ' }, 'address_line1', /required/],
      [{ address_line1: 'y'.repeat(121) }, 'address_line1', /120/],
      [{ address_line2: 'y'.repeat(121) }, 'address_line2', /120/],
      [{ city: 'P' }, 'city', /2–60/],
      [{ city: 'z'.repeat(61) }, 'city', /2–60/],
      [{ state_code: '25' }, 'state_code', /state code/],
      [{ state_code: '7' }, 'state_code', /state code/],
      [{ pincode: '011001' }, 'pincode', /6 digits/],
      [{ pincode: '41100' }, 'pincode', /6 digits/],
      [{ pincode: '41100a' }, 'pincode', /6 digits/],
      [{ gstin: '27AAPFU0939F1ZW' }, 'gstin', /check character/],
      [{ gstin: '27AAPFU0939F1Z' }, 'gstin', /15 characters/],
      [{ gstin: '27AAPFU0939F0ZV' }, 'gstin', /PAN/],
    ];
    for (const [change, field, reason] of cases) {
      const res = await browser.post(PROFILE, { ...VALID, ...change }, { csrf: true });
      assert.equal(res.statusCode, 422, `${JSON.stringify(change)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.deepEqual(Object.keys(res.json().errors), [field], res.body);
      assert.match(res.json().errors[field], reason, res.body);
    }
    // Several at once, with a field of the wrong type (the schema's refusal keeps the core's other reasons).
    const many = await browser.post(
      PROFILE,
      { ...VALID, legal_name: 'A', pincode: 411001, city: 'P', state_code: '99' },
      { csrf: true },
    );
    assert.equal(many.statusCode, 422, many.body);
    assert.deepEqual(Object.keys(many.json().errors).sort(), ['city', 'legal_name', 'pincode', 'state_code']);
    const missing = await browser.post(PROFILE, { legal_name: 'Asha' }, { csrf: true });
    assert.equal(missing.statusCode, 422, missing.body);
    for (const field of ['address_line1', 'city', 'state_code', 'pincode']) assert.ok(missing.json().errors[field]);
    assert.equal((await browser.get(PROFILE)).json().profile, null, 'nothing was stored');
  });

  test('a GSTIN of another state is 422 naming gstin', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const res = await browser.post(PROFILE, { ...VALID, state_code: '29', pincode: '560001' }, { csrf: true });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(Object.keys(res.json().errors), ['gstin']);
    assert.match(res.json().errors.gstin, /state code 27.*state is 29/);
    const karnataka = await browser.post(
      PROFILE,
      { ...VALID, state_code: '29', pincode: '560001', gstin: '29AAGCB7383J1Z4' },
      { csrf: true },
    );
    assert.equal(karnataka.statusCode, 200, karnataka.body);
  });

  test('another account cannot see it', async () => {
    const first = await signedInBrowser(t, freshIp());
    const saved = await first.browser.post(PROFILE, VALID, { csrf: true });
    assert.equal(saved.statusCode, 200, saved.body);
    const second = await signedInBrowser(t, freshIp());
    assert.equal((await second.browser.get(PROFILE)).json().profile, null);
    const theirs = await second.browser.post(PROFILE, { ...VALID, legal_name: 'Other Co' }, { csrf: true });
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.equal((await first.browser.get(PROFILE)).json().profile.legal_name, 'Asha Traders LLP');
    assert.equal((await second.browser.get(PROFILE)).json().profile.legal_name, 'Other Co');
  });
});
