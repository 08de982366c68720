// List answers as bytes made from their items' JSON. The instance lists are polled by dashboards
// and scripts; their items come from the list cache and the live-state cache as the same view
// objects until something in them changes (views/service.view.ts, cloud/views.ts), yet writing
// the same items again for every poll was a large part of a list request's work. Here each item's
// JSON is written once per view object, and a page's body is kept as bytes, per route and caller,
// while its items are the same objects.
//
// The items are written by a serializer compiled from the route's item schema exactly as the
// route's own would (serializationSchema), so properties outside the schema are left out the same
// way. The envelope's fields before the list are given as JSON text by the route; the pagination
// object is written as it is (plain numbers, in the order the schema lists them).

import fastJsonStringify from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import { serializationSchema } from './plugins/serializer.ts';

type FjsSchema = Parameters<typeof fastJsonStringify>[0];

/** Bodies kept per list route at most; the oldest goes first. */
const MAX_BODIES = 5_000;

interface Kept {
  items: readonly object[];
  rest: string;
  body: Buffer;
}

export interface JsonList<T extends object> {
  /**
   * The body `{<head>,"<field>":[…items…],"pagination":{…}}` of `accountId`'s page (never shared
   * between callers), from the bytes kept for it when `items` are the same objects and the
   * pagination the same.
   */
  page(accountId: number, items: readonly T[], pagination: { page: number; per_page: number; total: number }): Buffer;
}

/**
 * A list route's writer: `head` is the envelope's fields before the list as JSON text without
 * braces (`"ok":true`), `field` the list's name.
 */
export function jsonList<T extends object>(itemSchema: TSchema, head: string, field: string): JsonList<T> {
  const serialize = fastJsonStringify(serializationSchema(itemSchema) as FjsSchema) as (item: T) => string;
  const written = new WeakMap<T, string>();
  const kept = new Map<string, Kept>();
  const prefix = `{${head},${JSON.stringify(field)}:[`;
  const itemJson = (item: T): string => {
    let json = written.get(item);
    if (json === undefined) {
      json = serialize(item);
      written.set(item, json);
    }
    return json;
  };
  return {
    page(accountId, items, pagination) {
      const key = `${accountId}:${pagination.page}:${pagination.per_page}`;
      const rest = `"pagination":${JSON.stringify(pagination)}`;
      const hit = kept.get(key);
      if (hit && hit.rest === rest && sameItems(hit.items, items)) return hit.body;
      let text = prefix;
      for (let i = 0; i < items.length; i++) text += (i === 0 ? '' : ',') + itemJson(items[i] as T);
      text += `],${rest}}`;
      const body = Buffer.from(text, 'utf8');
      if (hit) kept.delete(key);
      else if (kept.size >= MAX_BODIES) kept.delete(kept.keys().next().value as string);
      kept.set(key, { items: [...items], rest, body });
      return body;
    },
  };
}

function sameItems(a: readonly object[], b: readonly object[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
