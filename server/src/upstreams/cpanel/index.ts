// The cPanel/WHM driver behind the WebPanel interface (contracts in ../web-panel.ts): one server
// reached with one WHM API token. The server's accounts are WHM API 1 calls (./accounts.ts);
// everything inside an account goes through WHM's UAPI proxy as that account (./databases.ts,
// ./mail.ts, ./php.ts, ./site.ts). A web panel has no console.

import type { DriverTiming, NodeAccess } from '../driver.ts';
import { UpstreamError } from '../errors.ts';
import type { WebPanel } from '../web-panel.ts';
import * as accounts from './accounts.ts';
import { CpanelClient } from './client.ts';
import { type CpanelConfig, parseCpanelNode as parseNode } from './config.ts';
import * as databases from './databases.ts';
import * as mail from './mail.ts';
import * as php from './php.ts';
import * as site from './site.ts';

export type { CpanelConfig } from './config.ts';

/** A node row (endpoint = WHM's URL; credentials {username, api_token}; settings {tls_insecure?, tls_ca?}) as a configuration. */
export function parseCpanelNode(node: NodeAccess, timing: DriverTiming): CpanelConfig {
  return parseNode(node, timing);
}

export function createCpanelPanel(config: CpanelConfig): WebPanel {
  const client = new CpanelClient(config);
  /** Every call: the configuration's problem first, then only UpstreamError, without the token. */
  const call =
    <A extends unknown[], R>(run: (c: CpanelClient, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      client.guard(() => run(client, ...args));

  return {
    ping: call(accounts.ping),
    openConsole(ticket) {
      throw new UpstreamError('rejected', `${client.label}: a web panel has no ${ticket.kind} console`, {
        retryable: false,
      });
    },
    consoleInput: () => null,
    close: () => client.close(),

    ensurePackage: call(accounts.ensurePackage),
    findAccount: call(accounts.findAccount),
    findAccountByDomain: call(accounts.findAccountByDomain),
    createAccount: call(accounts.createAccount),
    suspend: call(accounts.suspend),
    unsuspend: call(accounts.unsuspend),
    removeAccount: call(accounts.removeAccount),
    setPassword: call(accounts.setPassword),
    ssoUrl: call(accounts.ssoUrl),
    nameservers: call(accounts.nameservers),

    databaseRules: call(databases.databaseRules),
    listDatabases: call(databases.listDatabases),
    createDatabase: call(databases.createDatabase),
    deleteDatabase: call(databases.deleteDatabase),
    listDatabaseUsers: call(databases.listDatabaseUsers),
    createDatabaseUser: call(databases.createDatabaseUser),
    deleteDatabaseUser: call(databases.deleteDatabaseUser),
    grant: call(databases.grant),

    listMailboxes: call(mail.listMailboxes),
    createMailbox: call(mail.createMailbox),
    deleteMailbox: call(mail.deleteMailbox),
    setMailboxPassword: call(mail.setMailboxPassword),
    setMailboxQuota: call(mail.setMailboxQuota),

    php: call(php.getPhp),
    setPhp: call(php.setPhp),

    usage: call(site.usage),
    dnsZone: call(site.dnsZone),
    httpsStatus: call(site.httpsStatus),
    setHttpsRedirect: call(site.setHttpsRedirect),
  };
}
