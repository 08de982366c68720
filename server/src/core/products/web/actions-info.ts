// Web hosting actions, spec 4.10 Info: the account as the server holds it, its usage against
// the plan, the platform's events of the service, and the domain's nameservers and DNS zone.

import type { WebUsage } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import { answer, panelAction } from '../../product-kit/panel-action.ts';
import { eventsAction } from '../../product-kit/shared-actions.ts';
import { askWeb } from './account.ts';
import { webDomainOf } from './data.ts';

const usageView = (u: WebUsage) => ({
  id: u.id,
  description: u.description,
  usage: u.usage,
  maximum: u.maximum,
  unit: u.unit,
});

export const infoActions = [
  panelAction({
    name: 'overview',
    group: 'info',
    method: 'read',
    description: 'The hosting account: domain, username, package, address, disk, suspension',
    params: {},
    handler: async (ctx) => {
      const info = await askWeb(ctx, async (panel, account) => {
        const found = await panel.findAccount(account.username);
        if (!found) throw new AppError('no_panel_user', { message: 'The hosting account is not on its server.' });
        return found;
      });
      return answer('Account loaded.', {
        account: {
          domain: info.domain,
          username: info.username,
          package: info.package,
          ip: info.ip,
          suspended: info.suspended,
          disk: { used_mb: info.diskUsedMb, limit_mb: info.diskLimitMb },
        },
      });
    },
  }),
  panelAction({
    name: 'usage',
    group: 'info',
    method: 'read',
    description: 'Resource usage against the plan: disk, bandwidth, databases, mailboxes, …',
    params: {},
    handler: async (ctx) => {
      const usage = await askWeb(ctx, (panel, account) => panel.usage(account.username));
      return answer('Usage loaded.', { usage: usage.map(usageView) });
    },
  }),
  eventsAction("The platform's events of the service, newest first"),
  panelAction({
    name: 'nameservers',
    group: 'info',
    method: 'read',
    description: 'The nameservers to set at your registrar for the domain',
    params: {},
    handler: async (ctx) => {
      const nameservers = await askWeb(ctx, (panel) => panel.nameservers());
      return answer('Nameservers loaded.', { domain: webDomainOf(ctx.service), nameservers });
    },
  }),
  panelAction({
    name: 'dns',
    group: 'info',
    method: 'read',
    description: "The domain's DNS zone on the server",
    params: {},
    handler: async (ctx) => {
      const records = await askWeb(ctx, (panel, account) => panel.dnsZone(account.username, account.domain));
      return answer('Zone loaded.', {
        zone: webDomainOf(ctx.service),
        records: records.map((r) => ({ line: r.line, name: r.name, ttl: r.ttl, type: r.type, data: r.data })),
      });
    },
  }),
];
