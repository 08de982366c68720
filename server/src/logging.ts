// The process logger: pino, JSON lines on stdout, with secrets redacted wherever they are
// likely to appear (headers, bodies, query strings). Our own log calls name error codes
// `errorCode`, never `code`, because `code` is redacted (it is also the OTP field's name).

import pino, { type DestinationStream, type Logger } from 'pino';

const SECRET_KEYS = ['password', 'current_password', 'token', 'csrf_token', 'secret', 'api_key', 'otp'];

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY =
  /([?&](?:token|access_token|api_token|auth|key|apikey|api_key|code|t|ticket|csrf_token|password|secret|signature|sig)=)[^&#]*/gi;
/** An API token wherever it appears (a caller may put it under any name): its secret part. */
const TOKEN_VALUE = /(svc_)[A-Za-z0-9_-]+/g;

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
  // `code` is also the name of ordinary error codes (err.code), so only its body-like places.
  'code',
  'body.code',
  '*.body.code',
  'payload.code',
  '*.payload.code',
];

export function redactQuery(url: string): string {
  return url.replace(SECRET_QUERY, '$1[redacted]').replace(TOKEN_VALUE, '$1[redacted]');
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'hostplane' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: req.url === undefined ? undefined : redactQuery(req.url),
          ip: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      },
    },
    // stdout by default, written asynchronously: under load many lines go out in one write
    // instead of one blocking write per request; pino flushes what is pending on exit.
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
