// A product's stored JSON (plans.specs, services.config, services.external, jobs.params) read
// through the TypeBox schemas the product declares: checked once where it enters a job, an
// action or a view, and typed from there on, instead of cast. A row that does not fit is a
// programming or data error, reported with the path that failed, never silently misread.

import {
  type Static,
  type TInteger,
  type TNull,
  type TNumber,
  type TSchema,
  type TString,
  type TUnion,
  Type,
} from 'typebox';
import { Compile, type Validator } from 'typebox/compile';

/** Stored JSON that does not fit the schema its product declares. */
export class StoredDataError extends Error {
  override name = 'StoredDataError';
}

// Each schema is compiled once, on first use: lists read a stored reference per service per
// request, and an interpreted check of each costs far more than the compiled one.
/** Stored data's schemas refer to no other definitions. */
type NoContext = Record<never, never>;
const compiled = new WeakMap<TSchema, Validator>();
function validatorOf<T extends TSchema>(schema: T): Validator<NoContext, T> {
  const known = compiled.get(schema);
  if (known) return known as Validator<NoContext, T>;
  const made = Compile(schema);
  compiled.set(schema, made);
  return made;
}

/** `value` as `schema` says, or null when it does not fit (a reference a service may not have yet). */
export function storedOrNull<T extends TSchema>(schema: T, value: unknown): Static<T> | null {
  const validator = validatorOf(schema);
  return validator.Check(value) ? value : null;
}

/** `value` as `schema` says (defaults of absent optional keys left absent); throws StoredDataError naming `what`. */
export function readStored<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  const validator = validatorOf(schema);
  if (validator.Check(value)) return value;
  const [first] = validator.Errors(value);
  const where = first?.instancePath ? ` at ${first.instancePath}` : '';
  throw new StoredDataError(`${what} does not fit its schema${where}: ${first?.message ?? 'invalid'}`);
}

/** A whole number spec of a plan, between `min` and `max`. */
export const intSpec = (min: number, max: number): TInteger => Type.Integer({ minimum: min, maximum: max });

/** A number spec of a plan (fractions allowed), between `min` and `max`. */
export const numberSpec = (min: number, max: number): TNumber => Type.Number({ minimum: min, maximum: max });

/** A slug spec of a plan (a catalog entry it names: the game). */
export const slugSpec = (): TString => Type.String({ pattern: '^[a-z0-9][a-z0-9-]{1,47}$' });

/** A stored value that may be null. */
export const orNull = <T extends TSchema>(schema: T): TUnion<[T, TNull]> => Type.Union([schema, Type.Null()]);

/**
 * The keys every order stores in `services.config` (core/orders/order.service.ts, each product's
 * `serviceConfig`) and the worker's `cleanup_pending` (worker/cleanup.ts): the part of a product's
 * config schema every product shares; a product adds its own keys beside them.
 */
export const orderedConfig = {
  hostname: Type.Optional(orNull(Type.String())),
  /** The OS template's slug, for products that install one (set by every order, and by a reinstall). */
  os: Type.Optional(orNull(Type.String())),
  ssh_keys: Type.Optional(Type.Array(Type.String())),
  domain: Type.Optional(orNull(Type.String())),
  eula: Type.Optional(Type.Boolean()),
  /** The plan's specs when the service was ordered. */
  specs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** Set by the worker while a failed order's leftovers on the node are being removed. */
  cleanup_pending: Type.Optional(Type.Boolean()),
};
