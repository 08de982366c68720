// Request validation. Bodies are validated strictly (no type coercion: `"5"` is not 5, and an
// unknown field is refused rather than silently dropped); query strings, params and headers
// are coerced, since on the wire they are always text. Every failing field is reported.

import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  // ajv-formats is CommonJS with a default export; under NodeNext its default import is the module.
  (formats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
  return ajv;
}

export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object),
  );
}
