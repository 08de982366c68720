// Web hosting actions, spec 4.10 Runtime: the domain's PHP version and the hosting account's
// password (kept sealed with the service, as provisioning stored it).

import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { answer, panelAction } from '../../product-kit/panel-action.ts';
import { sealCredentials } from '../../services/credentials.ts';
import * as services from '../../services/service.repository.ts';
import { askWeb } from './account.ts';
import { Password } from './action.ts';

export const runtimeActions = [
  panelAction({
    name: 'php',
    group: 'runtime',
    method: 'read',
    description: "The domain's PHP version and the versions installed",
    params: {},
    handler: async (ctx) => {
      const php = await askWeb(ctx, (panel, account) => panel.php(account.username, account.domain));
      return answer('PHP loaded.', { php: { version: php.current, installed: php.installed } });
    },
  }),
  panelAction({
    name: 'php_set',
    group: 'runtime',
    method: 'mutate',
    description: "Switch the domain's PHP (`version`, one of the installed ones, e.g. ea-php82)",
    params: { version: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z0-9-]+$' }) },
    example: () => ({ version: 'ea-php82' }),
    handler: async (ctx, p) => {
      const version = String(p.version);
      await askWeb(
        ctx,
        async (panel, account) => {
          const { installed } = await panel.php(account.username, account.domain);
          if (!installed.includes(version) && version !== 'inherit') {
            throw AppError.fields({ version: `must be one of ${installed.join(', ')}` });
          }
          await panel.setPhp(account.username, account.domain, version);
        },
        'version',
      );
      return answer('PHP version set.', { php: { version } });
    },
  }),
  panelAction({
    name: 'password_change',
    group: 'runtime',
    method: 'mutate',
    description: "Change the hosting account's password (`password`; its MySQL login changes with it)",
    params: { password: Password },
    handler: async (ctx, p) => {
      const password = String(p.password);
      const username = await askWeb(
        ctx,
        async (panel, account) => {
          await panel.setPassword(account.username, password);
          return account.username;
        },
        'password',
      );
      await services.setCredentials(
        ctx.db,
        ctx.service.id,
        sealCredentials(ctx.secretKey, ctx.service.id, { username, password }),
      );
      return answer('Password changed.', { username });
    },
  }),
];
