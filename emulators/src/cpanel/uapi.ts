// UAPI dispatch for one account (`/execute/<Module>/<function>` and WHM's uapi_cpanel): the
// function table, the result object `{status, data, errors, warnings, messages, metadata}`
// (HTTP 200 even on failure), and the suspended-account rule (changes refused, reads allowed).

import {
  changePassword,
  createToken,
  domainsData,
  getUsages,
  listDomains,
  listTokens,
  phpInstalled,
  phpSetVhostVersions,
  phpVhostVersions,
  revokeToken,
  singleDomainData,
} from './account-modules.ts';
import { ApiError, type Ctx } from './context.ts';
import { massEditZone, parseZone } from './dns.ts';
import { addPop, deletePop, editPopQuota, listPopsWithDisk, passwdPop } from './email.ts';
import type { Params } from './http.ts';
import {
  createDatabase,
  createUser,
  deleteDatabase,
  deleteUser,
  getPrivileges,
  getRestrictions,
  listDatabases,
  listUsers,
  revokeAccess,
  setPassword,
  setPrivileges,
} from './mysql.ts';
import { autosslProblems, installedHosts, isAutosslInProgress, startAutosslCheck, toggleRedirect } from './ssl.ts';
import type { Account } from './state.ts';

export interface UapiResult {
  status: 0 | 1;
  data: unknown;
  errors: string[] | null;
  warnings: string[] | null;
  messages: string[] | null;
  metadata: Record<string, unknown>;
}

/** A handler's answer when it has more to say than its data (partial failures). */
export class Outcome {
  readonly data: unknown;
  readonly errors: string[];
  readonly messages: string[];

  constructor(data: unknown, errors: string[] = [], messages: string[] = []) {
    this.data = data;
    this.errors = errors;
    this.messages = messages;
  }
}

type Handler = (ctx: Ctx, account: Account, params: Params) => unknown;

interface Fn {
  run: Handler;
  /** Changes something (refused while the account is suspended; persisted after). */
  writes: boolean;
}

const read = (run: Handler): Fn => ({ run, writes: false });
const write = (run: Handler): Fn => ({ run, writes: true });

const FUNCTIONS: Record<string, Record<string, Fn>> = {
  Mysql: {
    get_restrictions: read((ctx, a) => getRestrictions(ctx, a)),
    list_databases: read((_ctx, a) => listDatabases(a)),
    list_users: read((ctx, a) => listUsers(ctx, a)),
    get_privileges_on_database: read((_ctx, a, p) => getPrivileges(a, p)),
    create_database: write((ctx, a, p) => createDatabase(ctx, a, p)),
    delete_database: write((_ctx, a, p) => deleteDatabase(a, p)),
    create_user: write((ctx, a, p) => createUser(ctx, a, p)),
    delete_user: write((_ctx, a, p) => deleteUser(a, p)),
    set_privileges_on_database: write((_ctx, a, p) => setPrivileges(a, p)),
    revoke_access_to_database: write((_ctx, a, p) => revokeAccess(a, p)),
    set_password: write((ctx, a, p) => setPassword(ctx, a, p)),
  },
  Email: {
    add_pop: write((ctx, a, p) => addPop(ctx, a, p)),
    delete_pop: write((_ctx, a, p) => deletePop(a, p)),
    passwd_pop: write((ctx, a, p) => passwdPop(ctx, a, p)),
    edit_pop_quota: write((_ctx, a, p) => editPopQuota(a, p)),
    list_pops_with_disk: read((_ctx, a, p) => listPopsWithDisk(a, p)),
  },
  LangPHP: {
    php_get_installed_versions: read(() => phpInstalled()),
    php_get_vhost_versions: read((_ctx, a, p) => phpVhostVersions(a, p)),
    php_set_vhost_versions: write((_ctx, a, p) => {
      const { data, errors } = phpSetVhostVersions(a, p);
      return new Outcome(data, errors);
    }),
  },
  ResourceUsage: {
    get_usages: read((_ctx, a) => getUsages(a)),
  },
  DNS: {
    parse_zone: read((_ctx, a, p) => parseZone(a, p)),
    mass_edit_zone: write((_ctx, a, p) => massEditZone(a, p)),
  },
  SSL: {
    installed_hosts: read((ctx, a) => installedHosts(ctx, a)),
    start_autossl_check: write((ctx, a) => startAutosslCheck(ctx, a)),
    is_autossl_check_in_progress: read((_ctx, a) => isAutosslInProgress(a)),
    get_autossl_problems: read((_ctx, a) => autosslProblems(a)),
    toggle_ssl_redirect_for_domains: write((_ctx, a, p) => toggleRedirect(a, p)),
  },
  Passwd: {
    change_password: write((ctx, a, p) => changePassword(ctx, a, p)),
  },
  DomainInfo: {
    list_domains: read((_ctx, a) => listDomains(a)),
    domains_data: read((ctx, a, p) => domainsData(ctx, a, p)),
    single_domain_data: read((ctx, a, p) => singleDomainData(ctx, a, p)),
  },
  Tokens: {
    create_full_access: write((_ctx, a, p) => createToken(a, p)),
    list: read((_ctx, a) => listTokens(a)),
    revoke: write((_ctx, a, p) => revokeToken(a, p)),
  },
};

export function uapiFailure(errors: string[], data: unknown = null): UapiResult {
  return { status: 0, data, errors, warnings: null, messages: null, metadata: {} };
}

/** Whether the function exists (for failNext / counters, known before running). */
export function knownFunction(module: string, fn: string): boolean {
  return FUNCTIONS[module]?.[fn] !== undefined;
}

/** Run one UAPI function for an account. */
export function runUapi(ctx: Ctx, account: Account, module: string, fn: string, params: Params): UapiResult {
  const mod = FUNCTIONS[module];
  if (!mod) {
    return uapiFailure([`Failed to load module “${module}”: Can't locate Cpanel/API/${module}.pm in @INC.`]);
  }
  const spec = mod[fn];
  if (!spec) return uapiFailure([`The “${module}” module does not have a function named “${fn}”.`]);
  if (spec.writes && account.suspended) return uapiFailure([`The account “${account.user}” is suspended.`]);
  try {
    const result = spec.run(ctx, account, params);
    if (spec.writes) ctx.changed();
    if (result instanceof Outcome) {
      if (result.errors.length > 0) ctx.changed();
      return {
        status: result.errors.length > 0 ? 0 : 1,
        data: result.data,
        errors: result.errors.length > 0 ? result.errors : null,
        warnings: null,
        messages: result.messages.length > 0 ? result.messages : null,
        metadata: {},
      };
    }
    return {
      status: 1,
      data: result === undefined ? null : result,
      errors: null,
      warnings: null,
      messages: null,
      metadata: {},
    };
  } catch (error) {
    if (error instanceof ApiError) return uapiFailure([error.message], error.extra ?? null);
    throw error;
  }
}
