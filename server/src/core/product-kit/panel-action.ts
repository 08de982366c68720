// How a product's management-route actions are declared (CONTRACT §6; game/, web/): one call
// per action with its group, method, parameter schema and handler; the route, its OpenAPI
// entry, the battery and the fuzz test are generated from the product's list.

import { type TObject, type TProperties, Type } from 'typebox';
import type { Service, ServiceStatus } from '../../db/tables.ts';
import type { ActionContext, ActionMethod, ActionResult, ProductAction } from './actions.ts';

export interface PanelActionSpec<P extends TProperties> {
  name: string;
  group: string;
  method: ActionMethod;
  description: string;
  params: P;
  /** Default: active services only. */
  states?: readonly ServiceStatus[];
  upload?: ProductAction['upload'];
  screen?: ProductAction['screen'];
  noStore?: boolean;
  /** Routes besides the management route (default: that route only). */
  surfaces?: ProductAction['surfaces'];
  handler(ctx: ActionContext, params: Record<string, unknown>): Promise<ActionResult>;
  example?(service: Service): Record<string, unknown>;
}

export function panelAction<P extends TProperties>(spec: PanelActionSpec<P>): ProductAction {
  const params: TObject = Type.Object(spec.params, { additionalProperties: false });
  return {
    name: spec.name,
    group: spec.group,
    method: spec.method,
    params,
    states: spec.states ?? ['active'],
    description: spec.description,
    surfaces: spec.surfaces ?? { session: 'panel' },
    ...(spec.upload ? { upload: spec.upload } : {}),
    ...(spec.screen ? { screen: spec.screen } : {}),
    ...(spec.noStore ? { noStore: true } : {}),
    handler: spec.handler,
    ...(spec.example ? { example: spec.example } : {}),
  };
}

/** A panel answer: the message and the fields of the envelope. */
export function answer(message: string, data: Record<string, unknown> = {}, status?: number): ActionResult {
  return { kind: 'data', message, data, ...(status === undefined ? {} : { status }) };
}

/** Text a client sends that lands in the panel (names, commands): no control characters. */
export const PlainText = (options: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({ pattern: '^[^\\u0000-\\u001f\\u007f]*$', ...options });

/** Every service status (actions that read the platform's own records: events, provisioning). */
export const EVERY_STATE: readonly ServiceStatus[] = [
  'pending',
  'provisioning',
  'active',
  'suspended',
  'failed',
  'terminated',
];
