// The problems of one order, gathered before anything is written and reported in one answer
// (CONTRACT §2: every failing field at once), and what the shared checks make of an order's
// config (./order-input.ts). Below the products, which add their own problems while resolving.

import { AppError, type ErrorCode } from '../errors.ts';

/**
 * How the caller's body names the order's fields, so errors name them the same way: the session
 * surface nests them (`config.os`), the token surface's deploy body is flat (`os`).
 */
export type FieldNaming = 'nested' | 'flat';

export interface CheckedConfig {
  /** Null: none given or derivable; the order service generates one. */
  serverName: string | null;
  region: string | null;
  /** Null: none given (the product decides; a VPS takes its label), or not an option of the product. */
  hostname: string | null;
  /** Null: none given (a VPS gets the default template), or not an option of the product. */
  os: string | null;
  sshKeys: string[];
  eula: boolean;
  domain: string | null;
  /** Cloud-init user data (vps); null when none given. Sealed with the service, never stored in the clear. */
  userData: string | null;
}

/** Fields outside `config` keep their own name on every surface. */
const TOP_LEVEL = new Set(['domain', 'plan', 'plan_id']);

/** The problems of one order, gathered before anything is written. */
export class OrderProblems {
  private readonly list: { field: string; reason: string; code: ErrorCode }[] = [];

  /** `field` is a config key, or domain / plan / plan_id. */
  add(field: string, reason: string, code: ErrorCode = `bad_config_${field}`): void {
    if (!this.list.some((p) => p.field === field)) this.list.push({ field, reason, code });
  }

  has(field: string): boolean {
    return this.list.some((p) => p.field === field);
  }

  /** `{field: reason}`, named as the caller's body names them. */
  fields(naming: FieldNaming): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const p of this.list)
      fields[naming === 'nested' && !TOP_LEVEL.has(p.field) ? `config.${p.field}` : p.field] = p.reason;
    return fields;
  }

  /** Throw them all as one 422, its code the first problem's. */
  throwIfAny(naming: FieldNaming): void {
    const first = this.list[0];
    if (!first) return;
    const fields = this.fields(naming);
    throw new AppError(first.code, {
      message: Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join('; '),
      fields,
    });
  }
}
