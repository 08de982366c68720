// Web hosting: ordered and sold today (a domain is required); provisioning arrives with the
// hosting panel driver.

import { AppError } from '../../errors.ts';
import { catalogOnlyProduct } from '../catalog-only.ts';

export const webProduct = catalogOnlyProduct({
  type: 'web',
  nodeKind: 'cpanel',
  specRules: {
    sites: { kind: 'int', min: 1, max: 1000 },
    disk_gb: { kind: 'int', min: 1, max: 1024 },
    mailboxes: { kind: 'int', min: 0, max: 10_000 },
    databases: { kind: 'int', min: 0, max: 1000 },
  },
  order: { keys: ['server_name', 'region', 'eula'], domain: 'required' },
  wrongType: () => new AppError('not_web_service'),
});
