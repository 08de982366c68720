// ci: one engine (the CLI is a client of the HTTP surfaces; every API path it calls runs on both engines in the other files)
// `hostplane orders` and `hostplane invoices [list] | show REF | pdf REF [--out FILE]` (issue 35,
// CONTRACT §9, §12) as a person runs them, with a token of scope billing.read only, against the
// real app on 127.0.0.1: the list (number, issued date in IST, description, taxable, tax, total)
// and show in table and json, an invoice named by id, number or order, an unpaid order that has
// none, and the orders list beside them. The PDF: through a stand-in of GET
// /api/v1/invoices/{id}/pdf in front of the app (the file named after the number, never
// overwritten without --force, --out FILE and -, -o json, a non-PDF answer refused, a pdf_url
// followed only under the server's own URL — the token is never sent elsewhere); and end to end
// against the app's own route once it has one (skipped until then).

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as forward, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { cliRunner, ok } from './support/cli.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { type ApiClient, apiClient } from './support/rest.ts';

const cli = cliRunner('hostplane-cli-inv');
let t: TestApp;
let url: string;
let buyer: ApiClient;
let reader: ApiClient;
/** The two paid orders' invoices and the unpaid renewal, as GET /api/v1/invoices lists them. */
let rows: Array<Record<string, unknown> & { id: number; public_id: string; invoice_id: number | null }>;

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    }),
  );

before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
  await t.deps.nodes.add({
    name: 'pve-mum1',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 50,
  });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // Two ₹799 orders empty the wallet; the first service's next month is then billed unpaid.
  buyer = await apiClient(t, ['*'], '1598');
  reader = await apiClient(t, ['billing.read'], '0', buyer.accountId);
  for (const name of ['inv-a', 'inv-b']) {
    const res = await buyer.call('POST', '/api/v1/instances', {
      plan: 'vps-2c-4g',
      server_name: name,
      region: 'mum1',
      eula: true,
      idempotency_key: `cli-${name}`,
    });
    assert.equal(res.statusCode, 201, res.body);
  }
  const db = t.deps.database.db;
  const first = await db.selectFrom('services').selectAll().where('label', '=', 'inv-a').executeTakeFirstOrThrow();
  const due = new Date(Date.now() - 3_600_000);
  await db.updateTable('services').set({ status: 'active', period_end: due }).where('id', '=', first.id).execute();
  const billed = await t.deps.billing.run({ accountId: buyer.accountId });
  assert.ok(
    billed.some((a) => a.action === 'unpaid'),
    JSON.stringify(billed),
  );
  rows = (await reader.call('GET', '/api/v1/invoices')).json().invoices;
  assert.equal(rows.length, 3);
});

after(async () => {
  await t.close();
  cli.cleanup();
});

/** The CLI with the billing.read token against `server` (the app unless told). */
const hostplane = (args: string[], server = url, dir = cli.home()) =>
  cli.run(dir, args, { env: { HOSTPLANE_TOKEN: reader.secret, HOSTPLANE_URL: server } });

const paid = () => rows.filter((r) => r.invoice_id !== null);
const unpaid = () => rows.find((r) => r.invoice_id === null) as (typeof rows)[number];

describe('hostplane invoices and orders', () => {
  test('the token list gives each paid order its invoice id, number and description', () => {
    assert.equal(paid().length, 2);
    for (const r of paid()) {
      assert.equal(typeof r.invoice_id, 'number');
      assert.match(r.number as string, /^HP\/\d{4}\/\d{6}$/);
      assert.match(r.description as string, /^Cloud VPS 4 GB: inv-[ab], one month \(order order_\w+\)$/);
    }
    assert.equal(unpaid().number, null);
    assert.equal(unpaid().description, null);
  });

  test('invoices (list): number, issued date, description, taxable, tax, total; -o json the same rows', async () => {
    const table = ok(await hostplane(['invoices'])).stdout;
    const [head, ...lines] = table.trim().split('\n');
    assert.match(head as string, /^ID\s+NUMBER\s+ISSUED\s+DESCRIPTION\s+TAXABLE\s+TAX\s+TOTAL$/);
    assert.equal(lines.length, 2, table);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Kolkata' });
    for (const r of paid()) {
      const line = lines.find((l) => l.includes(r.number as string));
      assert.ok(line, `${r.number} in\n${table}`);
      assert.match(line, new RegExp(`^${r.invoice_id}\\s+${(r.number as string).replaceAll('/', '\\/')}\\s+`));
      assert.ok(line.includes(today.format(new Date(r.issued_at as string))), line);
      // ₹799 with GST in it: taxable 677.12, tax 121.88.
      assert.match(line, /₹677\.12\s+₹121\.88\s+₹799\.00$/);
    }
    assert.equal(ok(await hostplane(['invoices', 'list'])).stdout, table);
    const json = JSON.parse(ok(await hostplane(['invoices', '-o', 'json'])).stdout);
    assert.deepEqual(json, paid());
  });

  test('invoices show by id, by number and by order; -o json is the row', async () => {
    const [one] = paid();
    const byId = ok(await hostplane(['invoices', 'show', String(one?.invoice_id)])).stdout;
    assert.match(byId, new RegExp(`^number\\s+${(one?.number as string).replaceAll('/', '\\/')}$`, 'm'));
    assert.match(byId, /^taxable value\s+₹677\.12$/m);
    assert.match(byId, /^tax\s+CGST ₹60\.94 \+ SGST ₹60\.94 \(18\.00 %\)$/m);
    assert.match(byId, /^total\s+₹799\.00$/m);
    assert.match(byId, new RegExp(`^order\\s+${one?.public_id} \\(new, paid\\)$`, 'm'));
    assert.match(byId, new RegExp(`^pdf\\s+hostplane invoices pdf ${one?.invoice_id}$`, 'm'));
    assert.equal(ok(await hostplane(['invoices', 'show', one?.number as string])).stdout, byId);
    assert.equal(ok(await hostplane(['invoices', 'show', one?.public_id as string])).stdout, byId);
    assert.deepEqual(
      JSON.parse(ok(await hostplane(['invoices', 'show', String(one?.invoice_id), '-o', 'json'])).stdout),
      one,
    );
  });

  test('an unknown invoice and an unpaid order: exit 1 saying why; no argument: exit 2', async () => {
    const unknown = await hostplane(['invoices', 'show', '987654']);
    assert.equal(unknown.code, 1, unknown.stderr);
    assert.match(unknown.stderr, /no invoice 987654 among your last 100 orders/);
    const open = await hostplane(['invoices', 'show', unpaid().public_id]);
    assert.equal(open.code, 1, open.stderr);
    assert.match(open.stderr, new RegExp(`order ${unpaid().public_id} has no invoice: it is unpaid`));
    const pdf = await hostplane(['invoices', 'pdf', unpaid().public_id]);
    assert.equal(pdf.code, 1, pdf.stderr);
    assert.equal((await hostplane(['invoices', 'show'])).code, 2);
  });

  test('orders lists every order, paid or not, with its invoice number', async () => {
    const table = ok(await hostplane(['orders'])).stdout;
    assert.match(
      table.split('\n')[0] as string,
      /^ORDER\s+KIND\s+STATUS\s+AMOUNT\s+INSTANCE\s+CREATED\s+PAID\s+INVOICE$/,
    );
    assert.match(table, new RegExp(`^${unpaid().public_id}\\s+renewal\\s+unpaid\\s+₹799\\.00\\s+.*\\s-$`, 'm'));
    for (const r of paid()) assert.match(table, new RegExp(`^${r.public_id}\\s+new\\s+paid\\s.*${r.number}$`, 'm'));
    assert.deepEqual(JSON.parse(ok(await hostplane(['orders', '-o', 'json'])).stdout), rows);
  });
});

describe('hostplane invoices pdf, through a stand-in of the PDF route', () => {
  const PDF = Buffer.from('%PDF-1.7\n% stand-in of GET /api/v1/invoices/{id}/pdf\n%%EOF\n');
  let stub: Server;
  let stubUrl: string;
  let elsewhere: Server;
  let elsewhereUrl: string;
  const asked: { path: string; authorization: string | undefined }[] = [];
  const strayed: string[] = [];
  /** What the stand-in sets as every row's pdf_url, or null to leave the app's (null). */
  let pdfUrl: ((invoiceId: number) => string) | null = null;

  function pass(req: IncomingMessage, res: ServerResponse, rewrite?: (body: string) => string) {
    const proxied = forward(new URL(req.url ?? '/', url), { method: req.method, headers: req.headers }, (answer) => {
      if (!rewrite) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = rewrite(Buffer.concat(chunks).toString());
        const { 'content-length': _, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    req.pipe(proxied);
  }

  before(async () => {
    stub = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const pdf = /^\/api\/v1\/invoices\/(\d+)\/pdf$/.exec(path);
      if (pdf) {
        asked.push({ path: req.url ?? '', authorization: req.headers.authorization });
        if (pdf[1] === '424242') {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html>a login page</html>');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end(PDF);
        return;
      }
      if (path === '/api/v1/invoices' && pdfUrl !== null) {
        const make = pdfUrl;
        return pass(req, res, (body) => {
          const parsed = JSON.parse(body);
          for (const row of parsed.invoices) if (row.invoice_id !== null) row.pdf_url = make(row.invoice_id);
          return JSON.stringify(parsed);
        });
      }
      pass(req, res);
    });
    stubUrl = await listen(stub);
    elsewhere = createServer((req, res) => {
      strayed.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(PDF);
    });
    elsewhereUrl = await listen(elsewhere);
  });

  after(async () => {
    await new Promise<void>((resolve) => stub.close(() => resolve()));
    await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
  });

  test('saved as its number (HP-FY-serial.pdf), with the billing.read token; never overwritten without --force', async () => {
    const [one] = paid();
    const dir = cli.home();
    const file = join(dir, `${(one?.number as string).replaceAll('/', '-')}.pdf`);
    const first = ok(await hostplane(['invoices', 'pdf', String(one?.invoice_id)], stubUrl, dir));
    assert.match(
      first.stdout,
      new RegExp(
        `Saved ${one?.number} to ${(one?.number as string).replaceAll('/', '-')}\\.pdf \\(${PDF.length} bytes\\)`,
      ),
    );
    assert.deepEqual(readFileSync(file), PDF);
    assert.deepEqual(asked.at(-1), {
      path: `/api/v1/invoices/${one?.invoice_id}/pdf`,
      authorization: `Bearer ${reader.secret}`,
    });

    writeFileSync(file, 'mine');
    const again = await hostplane(['invoices', 'pdf', one?.number as string], stubUrl, dir);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /exists: nothing was written/);
    assert.equal(readFileSync(file, 'utf8'), 'mine');
    ok(await hostplane(['invoices', 'pdf', one?.number as string, '--force'], stubUrl, dir));
    assert.deepEqual(readFileSync(file), PDF);
  });

  test('--out FILE with -o json; --out - writes the bytes to standard output', async () => {
    const [, two] = paid();
    const dir = cli.home();
    const saved = JSON.parse(
      ok(
        await hostplane(['invoices', 'pdf', two?.public_id as string, '--out', 'mine.pdf', '-o', 'json'], stubUrl, dir),
      ).stdout,
    );
    assert.deepEqual(saved, {
      invoice_id: two?.invoice_id,
      number: two?.number,
      file: join(dir, 'mine.pdf'),
      bytes: PDF.length,
    });
    assert.deepEqual(readFileSync(join(dir, 'mine.pdf')), PDF);
    const piped = ok(await hostplane(['invoices', 'pdf', String(two?.invoice_id), '--out', '-'], stubUrl, dir));
    assert.deepEqual(piped.bytes, PDF);
  });

  test('an answer that is not a PDF is refused and nothing is written', async () => {
    const dir = cli.home();
    const r = await hostplane(['invoices', 'pdf', '424242'], stubUrl, dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /answered text\/html, not a PDF/);
    assert.equal(existsSync(join(dir, 'invoice-424242.pdf')), false);
  });

  test('the CLI asks its own server by invoice id, whatever pdf_url says: no token leaves for another host', async () => {
    const [one] = paid();
    pdfUrl = (id) => `${elsewhereUrl}/api/v1/invoices/${id}/pdf`;
    try {
      ok(await hostplane(['invoices', 'pdf', String(one?.invoice_id), '--out', '-'], stubUrl));
      assert.equal(asked.at(-1)?.path, `/api/v1/invoices/${one?.invoice_id}/pdf`);
      assert.deepEqual(strayed, [], 'no request, so no token, reached the other host');
    } finally {
      pdfUrl = null;
    }
  });
});

describe('hostplane invoices pdf against the app itself', () => {
  test('a real PDF of a paid invoice, from GET /api/v1/invoices/{id}/pdf', async () => {
    const [one] = paid();
    const dir = cli.home();
    ok(await hostplane(['invoices', 'pdf', String(one?.invoice_id), '--out', 'real.pdf'], url, dir));
    const bytes = readFileSync(join(dir, 'real.pdf'));
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    assert.match(bytes.subarray(-32).toString('latin1'), /%%EOF\s*$/);
  });
});
