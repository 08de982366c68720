// What a parsed search query is (spec 4.13, CONTRACT §8): the result groups, the operators, the
// shapes free text can take, and the error the grammar raises. Shared by the parser (./query.ts
// and the modules it composes) and the searchers; no logic beyond the error's constructor.

import { PLAN_TYPES, type PlanType } from '../../db/tables.ts';
import { AppError } from '../errors.ts';

export const SEARCH_TYPES = ['service', 'ip', 'order', 'transaction', 'deposit'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** Service product types (the plan types, in catalog order), accepted under `type:` as a filter on the service group. */
export const PRODUCT_TYPES = PLAN_TYPES;
export type ProductType = PlanType;

export const OPERATOR_NAMES = ['type', 'status', 'loc', 'node', 'user'] as const;
export type OperatorName = (typeof OPERATOR_NAMES)[number];

export type SearchKind =
  | 'ipv4'
  | 'ipv6'
  | 'cidr'
  | 'mac'
  | 'email'
  | 'payment_id'
  | 'order_id'
  | 'number'
  | 'domain'
  | 'text'
  | 'empty';

export interface SearchCidr {
  family: 4 | 6;
  /** Network address, host bits zeroed. */
  network: string;
  prefix: number;
  first: string;
  last: string;
}

export interface SearchOperators {
  /** Result groups, in the canonical group order; empty = every group. */
  type: SearchType[];
  /** Product types narrowing the service group (`type:vps`); a product also puts `service` in `type`. */
  product: ProductType[];
  /** Lower-cased, not validated here. */
  status: string[];
  loc: string[];
  node: string[];
  user: string[];
}

export interface ParsedQuery {
  /** The query as given, trimmed. */
  q: string;
  kind: SearchKind;
  /** Free text: operators removed, quotes resolved, white space collapsed. */
  text: string;
  ipv4?: string;
  ipv6?: string;
  zone?: string;
  cidr?: SearchCidr;
  mac?: string;
  email?: string;
  publicId?: string;
  number?: number;
  domain?: string;
  operators: SearchOperators;
}

/** A query the grammar refuses: 422 validation_failed with `errors: {[field]: reason}`. */
export class SearchQueryError extends AppError {
  override name = 'SearchQueryError';
  readonly field: string;
  readonly reason: string;

  constructor(reason: string, field = 'q') {
    super('validation_failed', { fields: { [field]: reason }, message: reason });
    this.field = field;
    this.reason = reason;
  }
}
