// Web hosting: an account on a cPanel/WHM server for the order's domain, with the plan's
// package (disk, mailboxes, databases), managed through the product's own route
// (/api/v1/client/web/, spec 4.10, CONTRACT §6). Web hosting has no power or console: those
// actions of the other products are 422 not_supported on a web service.

import { AppError } from '../../errors.ts';
import type { Product } from '../../product-kit/product.ts';
import { isoWithOffset } from '../../time.ts';
import { askWeb, webRefused } from './account.ts';
import { webActions } from './actions.ts';
import { webConfigOf, webSpecs } from './data.ts';
import { webOrder } from './order.ts';
import { type WebJob, webJobs } from './provision.ts';

const NO_POWER = 'Web hosting has no server to power on or off; manage it through /api/v1/client/web/.';

export const webProduct: Product<null, WebJob> = {
  type: 'web',
  nodeKind: 'cpanel',
  specs: webSpecs,
  order: webOrder,
  release: async () => {},
  view(service) {
    const { domain } = webConfigOf(service);
    return { hostname: domain ?? null, os: null, domain: domain ?? null };
  },
  login: () => null,
  jobs: webJobs,
  live: null,
  actions: webActions,
  wrongType: () => new AppError('not_web_service', { message: 'This service is not web hosting.' }),
  refused: webRefused,
  // A one-time cPanel session (WHM create_user_session), valid minutes and for one use.
  async sso(ctx) {
    const url = await askWeb(ctx, (panel, account) => panel.ssoUrl(account.username));
    return {
      url,
      expires_at: isoWithOffset(new Date(ctx.clock().getTime() + 5 * 60_000)),
      note: 'A one-time sign-in link into cPanel; open it within five minutes.',
    };
  },
  unsupported: {
    start: NO_POWER,
    stop: NO_POWER,
    restart: NO_POWER,
    kill: NO_POWER,
    reinstall: 'Web hosting has no system to reinstall.',
    vnc: 'Web hosting has no console.',
    console: 'Web hosting has no console.',
    status: 'Web hosting has no live power state; see action=usage on /api/v1/client/web/.',
    graph: 'Web hosting has no metrics graph; see action=usage on /api/v1/client/web/.',
  },
};
