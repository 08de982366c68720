// The game product's actions: the shared declaration (../panel-action.ts) with the groups of
// spec 4.9; a file action screens its raw parameters for NUL bytes in paths (400 path_traversal).

import type { TProperties } from 'typebox';
import { Type } from 'typebox';
import type { ProductAction } from '../../product-kit/actions.ts';
import { type PanelActionSpec, panelAction } from '../../product-kit/panel-action.ts';
import { refuseNulInPaths } from './paths.ts';

export { answer, PlainText } from '../../product-kit/panel-action.ts';

export type GameGroup =
  | 'info'
  | 'console'
  | 'files'
  | 'backups'
  | 'databases'
  | 'schedules'
  | 'startup'
  | 'users'
  | 'lifecycle';

export function gameAction<P extends TProperties>(spec: PanelActionSpec<P> & { group: GameGroup }): ProductAction {
  return panelAction({ ...spec, ...(spec.group === 'files' ? { screen: refuseNulInPaths } : {}) });
}

export const UuidParam = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'the UUID the list gave',
});

export const PathParam = (description: string) => Type.String({ minLength: 1, maxLength: 4096, description });
