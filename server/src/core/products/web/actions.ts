// Web hosting actions, spec 4.10 (CONTRACT §6), in the order the product lists them (the OpenAPI
// document and the action battery follow it): the account (overview, usage, events, nameservers,
// DNS), MySQL databases and users, mailboxes, PHP and the account password, and HTTPS. The plan's
// limits on databases and mailboxes are checked before the panel is asked (409 limit_reached);
// the package on the server enforces the same ones.

import { databaseActions } from './actions-databases.ts';
import { httpsActions } from './actions-https.ts';
import { infoActions } from './actions-info.ts';
import { mailActions } from './actions-mail.ts';
import { runtimeActions } from './actions-runtime.ts';

export const webActions = [...infoActions, ...databaseActions, ...mailActions, ...runtimeActions, ...httpsActions];
