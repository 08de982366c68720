// HTTP as a Redfish service speaks it (DMTF DSP0266): JSON bodies with OData headers, ETags,
// and errors as `{"error": {"code", "message", "@Message.ExtendedInfo": [...]}}` whose messages
// come from the Base message registry (MessageId `Base.1.8.<Key>`, Message, MessageArgs,
// RelatedProperties as JSON pointers, Severity, Resolution).

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const MAX_BODY = 256 * 1024;
export const BASE = 'Base.1.8';

/** The Base registry messages the emulator answers: text with %1… placeholders, severity, resolution. */
const REGISTRY: Record<string, { text: string; severity: 'OK' | 'Warning' | 'Critical'; resolution: string }> = {
  Success: { text: 'The request completed successfully.', severity: 'OK', resolution: 'None' },
  GeneralError: {
    text: 'A general error has occurred. See Resolution for information on how to resolve the error.',
    severity: 'Critical',
    resolution: 'None.',
  },
  InternalError: {
    text: 'The request failed due to an internal service error.  The service is still operational.',
    severity: 'Critical',
    resolution: 'Resubmit the request.  If the problem persists, consider resetting the service.',
  },
  MalformedJSON: {
    text: 'The request body submitted was malformed JSON and could not be parsed by the receiving service.',
    severity: 'Critical',
    resolution: 'Ensure that the request body is valid JSON and resubmit the request.',
  },
  PropertyUnknown: {
    text: 'The property %1 is not in the list of valid properties for the resource.',
    severity: 'Warning',
    resolution: 'Remove the unknown property from the request body and resubmit the request if the operation failed.',
  },
  PropertyMissing: {
    text: 'The property %1 is a required property and must be included in the request.',
    severity: 'Warning',
    resolution:
      'Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed.',
  },
  PropertyNotWritable: {
    text: 'The property %1 is a read only property and cannot be assigned a value.',
    severity: 'Warning',
    resolution: 'Remove the property from the request body and resubmit the request if the operation failed.',
  },
  PropertyValueNotInList: {
    text: 'The value %1 for the property %2 is not in the list of acceptable values.',
    severity: 'Warning',
    resolution:
      'Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.',
  },
  PropertyValueTypeError: {
    text: 'The value %1 for the property %2 is of a different type than the property can accept.',
    severity: 'Warning',
    resolution:
      'Correct the value for the property in the request body and resubmit the request if the operation failed.',
  },
  PropertyValueFormatError: {
    text: 'The value %1 for the property %2 is of a different format than the property can accept.',
    severity: 'Warning',
    resolution:
      'Correct the value for the property in the request body and resubmit the request if the operation failed.',
  },
  ActionParameterMissing: {
    text: 'The action %1 requires the parameter %2 to be present in the request body.',
    severity: 'Critical',
    resolution: 'Supply the action with the required parameter in the request body when the request is resubmitted.',
  },
  ActionParameterUnknown: {
    text: 'The action %1 was submitted with the invalid parameter %2.',
    severity: 'Warning',
    resolution: 'Correct the invalid parameter and resubmit the request if the operation failed.',
  },
  ActionNotSupported: {
    text: 'The action %1 is not supported by the resource.',
    severity: 'Critical',
    resolution:
      'The action supplied cannot be resubmitted to the implementation.  Perhaps the action was invalid, the wrong resource was the target or the implementation documentation may be of assistance.',
  },
  ResourceMissingAtURI: {
    text: 'The resource at the URI %1 was not found.',
    severity: 'Critical',
    resolution: 'Place a valid resource at the URI or correct the URI and resubmit the request.',
  },
  ResourceInUse: {
    text: 'The change to the requested resource failed because the resource is in use or in transition.',
    severity: 'Warning',
    resolution: 'Remove the condition and resubmit the request if the operation failed.',
  },
  NoValidSession: {
    text: 'There is no valid session established with the implementation.',
    severity: 'Critical',
    resolution: 'Establish a session before attempting any operations.',
  },
  ResourceAtUriUnauthorized: {
    text: 'While accessing the resource at %1, the service received an authorization error %2.',
    severity: 'Critical',
    resolution: 'Ensure that the appropriate access is provided for the service in order for it to access the URI.',
  },
  PreconditionFailed: {
    text: 'The ETag supplied did not match the ETag required to change this resource.',
    severity: 'Critical',
    resolution: 'Try the operation again using the appropriate ETag.',
  },
  PreconditionRequired: {
    text: 'A precondition header or annotation is required to change this resource.',
    severity: 'Critical',
    resolution: 'Try the operation again using an If-Match or If-None-Match header and appropriate ETag.',
  },
  ServiceTemporarilyUnavailable: {
    text: 'The service is temporarily unavailable.  Retry in %1 seconds.',
    severity: 'Critical',
    resolution: 'Wait for the indicated retry duration and retry the operation.',
  },
};

export interface Message {
  '@odata.type': string;
  MessageId: string;
  Message: string;
  MessageArgs: string[];
  RelatedProperties?: string[];
  Severity: string;
  MessageSeverity: string;
  Resolution: string;
}

/** A Base registry message; a key outside the registry is a GeneralError with `override` as its text. */
export function message(key: string, args: string[] = [], related: string[] = [], override?: string): Message {
  const entry = REGISTRY[key] ?? REGISTRY.GeneralError!;
  const text = override ?? args.reduce((t, arg, i) => t.replace(`%${i + 1}`, arg), entry.text);
  return {
    '@odata.type': '#Message.v1_1_2.Message',
    MessageId: `${BASE}.${REGISTRY[key] ? key : 'GeneralError'}`,
    Message: text,
    MessageArgs: args,
    ...(related.length > 0 ? { RelatedProperties: related } : {}),
    Severity: entry.severity,
    MessageSeverity: entry.severity,
    Resolution: entry.resolution,
  };
}

/** A refusal a handler throws: the HTTP status and the messages of its ExtendedInfo. */
export class RedfishError extends Error {
  readonly status: number;
  readonly messages: Message[];
  readonly headers: Record<string, string>;

  constructor(status: number, messages: Message | Message[], headers: Record<string, string> = {}) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list[0]?.Message ?? 'error');
    this.status = status;
    this.messages = list;
    this.headers = headers;
  }
}

/** The error body DSP0266 §9.5 describes. */
export function errorBody(messages: Message[]): unknown {
  const single = messages.length === 1 ? messages[0] : undefined;
  return {
    error: {
      code: single?.MessageId ?? `${BASE}.GeneralError`,
      message: single?.Message ?? 'A general error has occurred. See ExtendedInfo for more information.',
      '@Message.ExtendedInfo': messages,
    },
  };
}

/** A JSON request body, or undefined when empty; throws MalformedJSON / too large. */
export function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY)
        return reject(new RedfishError(413, message('GeneralError', [], [], 'The request body is too large.')));
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new RedfishError(400, message('MalformedJSON')));
      }
    });
    req.on('error', reject);
  });
}

const COMMON_HEADERS = {
  'odata-version': '4.0',
  'cache-control': 'no-cache',
  'x-frame-options': 'DENY',
  server: 'Hostplane-Redfish-Emulator',
};

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'content-type': 'application/json;charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-length': 0, ...headers });
  res.end();
}

export function sendError(res: ServerResponse, error: RedfishError): void {
  sendJson(res, error.status, errorBody(error.messages), error.headers);
}

/** A weak ETag of a resource's JSON (what the resource says in `@odata.etag` and the ETag header). */
export function etagOf(body: unknown): string {
  return `W/"${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16)}"`;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
