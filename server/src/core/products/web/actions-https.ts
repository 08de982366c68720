// Web hosting actions, spec 4.10 HTTPS: the domain's certificate (AutoSSL) and whether HTTP is
// redirected to HTTPS, which is only allowed once the certificate is a valid one.

import { AppError } from '../../errors.ts';
import { answer, panelAction } from '../../product-kit/panel-action.ts';
import { askWeb } from './account.ts';

export const httpsActions = [
  panelAction({
    name: 'https_status',
    group: 'https',
    method: 'read',
    description: "The domain's certificate (AutoSSL), checks in progress, problems, and whether HTTPS is forced",
    params: {},
    handler: async (ctx) => {
      const status = await askWeb(ctx, (panel, account) => panel.httpsStatus(account.username, account.domain));
      return answer('HTTPS status loaded.', {
        https: {
          certificate: status.certificate
            ? {
                issuer: status.certificate.issuer,
                not_after: status.certificate.notAfter,
                domains: status.certificate.domains,
                self_signed: status.certificate.selfSigned,
              }
            : null,
          autossl_in_progress: status.autosslInProgress,
          problems: status.problems,
          forced: status.forced,
        },
      });
    },
  }),
  panelAction({
    name: 'https_force',
    group: 'https',
    method: 'mutate',
    description: 'Redirect HTTP to HTTPS (once the domain has a valid certificate)',
    params: {},
    handler: async (ctx) => {
      await askWeb(ctx, async (panel, account) => {
        const status = await panel.httpsStatus(account.username, account.domain);
        if (!status.certificate || status.certificate.selfSigned) {
          throw new AppError('conflict', {
            message:
              'The domain has no valid certificate yet (AutoSSL issues one shortly after the account is made); try again later.',
          });
        }
        await panel.setHttpsRedirect(account.username, account.domain, true);
      });
      return answer('HTTPS is forced.', { forced: true });
    },
  }),
  panelAction({
    name: 'https_unforce',
    group: 'https',
    method: 'mutate',
    description: 'Stop redirecting HTTP to HTTPS',
    params: {},
    handler: async (ctx) => {
      await askWeb(ctx, (panel, account) => panel.setHttpsRedirect(account.username, account.domain, false));
      return answer('HTTPS is no longer forced.', { forced: false });
    },
  }),
];
