// WHM API 1 dispatch (`/json-api/<function>?api.version=1`): the function table, the envelope
// `{metadata:{command, version, result, reason, output?}, data?}` (HTTP 200 on failure too),
// the legacy API 0 shape when `api.version=1` is missing, and uapi_cpanel, which runs a UAPI
// function as a cPanel user and answers its result under `data.uapi`.

import {
  accountsummary,
  changepackage,
  createacct,
  listaccts,
  passwd,
  removeacct,
  suspendacct,
  unsuspendacct,
} from './accounts.ts';
import { ApiError, type Ctx } from './context.ts';
import type { Params } from './http.ts';
import { addpkg, editpkg, getpkginfo, killpkg, listpkgs } from './packages.ts';
import { passwordStrength } from './password.ts';
import { createUserSession } from './session.ts';
import { runUapi, type UapiResult, uapiFailure } from './uapi.ts';
import type { WhmAnswer } from './whm-types.ts';

type WhmFn = (ctx: Ctx, params: Params) => WhmAnswer;

const FUNCTIONS: Record<string, WhmFn> = {
  version: (ctx) => ({ data: { version: ctx.settings.version } }),
  get_nameserver_config: (ctx) => ({ data: { nameservers: [...ctx.settings.nameservers] } }),
  gethostname: (ctx) => ({ data: { hostname: ctx.settings.hostname } }),
  get_password_strength: (_ctx, params) => {
    const password = params.get('password');
    if (password === undefined) throw new ApiError('password parameter was not passed');
    return { data: { strength: passwordStrength(password) } };
  },
  createacct,
  suspendacct,
  unsuspendacct,
  removeacct,
  passwd,
  changepackage,
  accountsummary,
  listaccts,
  addpkg,
  editpkg,
  killpkg,
  listpkgs: (ctx) => listpkgs(ctx),
  getpkginfo,
  create_user_session: createUserSession,
};

export interface WhmEnvelope {
  metadata: {
    command: string;
    version: number;
    result: 0 | 1;
    reason: string;
    output?: { raw: string };
    warnings?: string[];
  };
  data?: unknown;
}

export function whmKnown(fn: string): boolean {
  return fn === 'uapi_cpanel' || FUNCTIONS[fn] !== undefined;
}

export function whmFailure(fn: string, reason: string, raw?: string, data?: unknown): WhmEnvelope {
  return {
    metadata: { command: fn, version: 1, result: 0, reason, ...(raw ? { output: { raw } } : {}) },
    ...(data !== undefined && data !== null ? { data } : {}),
  };
}

/** The UAPI call a uapi_cpanel request names, or a WHM failure. */
export function uapiTarget(params: Params): { user: string; module: string; fn: string } | WhmEnvelope {
  for (const name of ['cpanel.user', 'cpanel.module', 'cpanel.function']) {
    const value = params.get(name);
    if (value === undefined) return whmFailure('uapi_cpanel', `Provide the “${name}” parameter.`);
    if (value === '') return whmFailure('uapi_cpanel', `The value of “${name}” may not be empty.`);
  }
  return {
    user: params.get('cpanel.user') ?? '',
    module: params.get('cpanel.module') ?? '',
    fn: params.get('cpanel.function') ?? '',
  };
}

/** Run a WHM API 1 function (uapi_cpanel included) and build its envelope. */
export function runWhm(ctx: Ctx, fn: string, params: Params, failUapi: boolean, generic: string): WhmEnvelope {
  if (fn === 'uapi_cpanel') {
    const target = uapiTarget(params);
    if ('metadata' in target) return target;
    const account = ctx.state.accounts.get(target.user);
    if (!account) return whmFailure(fn, `You do not have a user named “${target.user}”.`);
    for (const name of ['cpanel.user', 'cpanel.module', 'cpanel.function', 'api.version']) params.delete(name);
    const uapi: UapiResult = failUapi
      ? uapiFailure([generic])
      : runUapi(ctx, account, target.module, target.fn, params);
    return { metadata: { command: fn, version: 1, result: 1, reason: 'OK' }, data: { uapi } };
  }
  const run = FUNCTIONS[fn];
  if (!run) return whmFailure(fn, `Unknown app (${fn}) requested for this version (1) of the API.`);
  try {
    const answer = run(ctx, params);
    return {
      metadata: {
        command: fn,
        version: 1,
        result: 1,
        reason: answer.reason ?? 'OK',
        ...(answer.raw !== undefined ? { output: { raw: answer.raw } } : {}),
        ...(answer.warnings?.length ? { warnings: answer.warnings } : {}),
      },
      ...(answer.data !== undefined ? { data: answer.data } : {}),
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const extra = error.extra;
    return whmFailure(
      fn,
      error.message,
      typeof extra === 'string' ? extra : undefined,
      typeof extra === 'object' ? extra : undefined,
    );
  }
}

/** The legacy API 0 shape (no `api.version=1`): `{result:[{status, statusmsg, …}]}`. */
export function legacyShape(envelope: WhmEnvelope): unknown {
  const m = envelope.metadata;
  if (m.reason.startsWith('Unknown app')) return { error: `Unknown App Requested: ${m.command}` };
  return {
    result: [
      {
        status: m.result,
        statusmsg: m.reason,
        ...(m.output ? { rawout: m.output.raw } : {}),
        ...(envelope.data !== undefined ? { options: envelope.data } : {}),
      },
    ],
  };
}
