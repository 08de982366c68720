// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The process logger's pre-built lines (logging.ts, prebuiltInfoLines): the access log writes its
// line without pino's per-field serialisation, and the line must be the one pino writes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino, { type DestinationStream } from 'pino';
import { createLogger, prebuiltInfoLines, redactQuery } from '../src/logging.ts';

class Lines implements DestinationStream {
  lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
}

const withoutTime = (line: string) => line.replace(/,"time":"[^"]*"/, '');

test('a pre-built line is the line pino writes for the same fields, byte for byte but the time', () => {
  const out = new Lines();
  const logger = createLogger('info', out).child({ component: 'access' });
  const write = prebuiltInfoLines(logger);
  assert.ok(write, 'the process logger takes pre-built lines');
  const fields = {
    reqId: 'r-1 "quoted" \\ é',
    req: { method: 'GET', url: '/api/v1/plans?x=ü\n', ip: '127.0.0.1' },
    res: { statusCode: 200 },
    ms: 1.5,
  };
  logger.info(fields, 'GET 200');
  write(JSON.stringify(fields).slice(1, -1), 'GET 200');
  assert.equal(out.lines.length, 2);
  assert.equal(withoutTime(out.lines[1] as string), withoutTime(out.lines[0] as string));
  assert.match(
    out.lines[1] as string,
    /^\{"level":30,"time":"[^"]+","service":"hostplane","component":"access","reqId":/,
  );
  assert.ok((out.lines[1] as string).endsWith('"msg":"GET 200"}\n'));
  assert.deepEqual(JSON.parse(out.lines[1] as string).req, fields.req);
});

test('a pre-built line follows the level: none below info', () => {
  const out = new Lines();
  const logger = createLogger('info', out);
  const write = prebuiltInfoLines(logger);
  assert.ok(write);
  logger.level = 'warn';
  write('"a":1', 'hidden');
  assert.equal(out.lines.length, 0);
  logger.level = 'debug';
  write('"a":1', 'shown');
  assert.equal(out.lines.length, 1);
});

test('a logger that does more to a line (mixin, formatter, hooks, prefix, message key, metadata) logs through pino', () => {
  const out = new Lines();
  const metadata = Object.assign(new Lines(), { [pino.symbols.needsMetadataGsym]: true });
  for (const logger of [
    pino({ mixin: () => ({ extra: 1 }) }, out),
    pino({ formatters: { log: (o: Record<string, unknown>) => o } }, out),
    pino({ hooks: { logMethod: (args, method) => method.apply(pino(), args) } }, out),
    pino({ msgPrefix: '[x] ' }, out),
    pino({ messageKey: 'message' }, out),
    pino({}, metadata),
  ])
    assert.equal(prebuiltInfoLines(logger), null);
  assert.ok(prebuiltInfoLines(pino({}, out)));
});

test('redactQuery: a URL without a query or token is returned as it is; secrets in one are masked', () => {
  assert.equal(redactQuery('/api/v1/plans'), '/api/v1/plans');
  assert.equal(redactQuery('/api/v1/x?token=abc&keep=1'), '/api/v1/x?token=[redacted]&keep=1');
  assert.equal(redactQuery('/api/v1/x&token=abc'), '/api/v1/x&token=[redacted]');
  assert.equal(redactQuery('/api/v1/svc_SECRET/x'), '/api/v1/svc_[redacted]/x');
});
