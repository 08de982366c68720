// The routes' view of the product actions: which actions a surface route exposes, and the
// one-line lists, parameter schemas and descriptions the routes and their OpenAPI entries are
// built from, all read off the registry (so a product's new action documents itself).

import { type TProperties, Type } from 'typebox';
import { type ProductAction, type SessionRoute, sessionRoutes } from './actions.ts';
import type { ProductRegistry } from './registry.ts';

type Surface = 'session' | 'token';

/** The product actions a surface route exposes, in registry order. */
export function actionsOn(products: ProductRegistry, surface: Surface, route: string): ProductAction[] {
  return products.all.flatMap((p) =>
    p.actions.filter((a) =>
      surface === 'session' ? sessionRoutes(a).includes(route as SessionRoute) : a.surfaces.token === route,
    ),
  );
}

/** A route's one-line list of its actions: `start | reinstall ({os, confirm = label})`. */
export function listActions(products: ProductRegistry, surface: Surface, route: string, separator: string): string {
  const actions = actionsOn(products, surface, route);
  return [...new Set(actions.map((a) => (a.usage ? `${a.name} (${a.usage})` : a.name)))].join(separator);
}

/** The route's action names as a sentence: `start, stop or reinstall`. */
export function actionNames(products: ProductRegistry, surface: Surface, route: string): string {
  const names = [...new Set(actionsOn(products, surface, route).map((a) => a.name))];
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** The parameters of every action of a route, each optional (one body schema for the route). */
export function actionParams(products: ProductRegistry, surface: Surface, route: string): TProperties {
  const properties: TProperties = {};
  for (const a of actionsOn(products, surface, route))
    for (const [key, schema] of Object.entries(a.params.properties)) properties[key] ??= Type.Optional(schema);
  return properties;
}

/** What each action of a route does (both surfaces' OpenAPI descriptions). */
export function describeActions(products: ProductRegistry, surface: Surface, route: string): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const a of actionsOn(products, surface, route)) {
    if (seen.has(a.name)) continue;
    seen.add(a.name);
    parts.push(`${a.name}: ${a.description}.`);
  }
  return parts.join(' ');
}

/** What the power actions and reinstall do (both surfaces' OpenAPI descriptions). */
export const powerDescription = (products: ProductRegistry): string => describeActions(products, 'session', 'action');

/** The token surface's own routes of actions: PUT /instances/{id}/<path>, each with its action. */
export function tokenPuts(products: ProductRegistry): { path: string; action: ProductAction }[] {
  return products.all.flatMap((p) =>
    p.actions.flatMap((a) => (typeof a.surfaces.token === 'object' ? [{ path: a.surfaces.token.put, action: a }] : [])),
  );
}
