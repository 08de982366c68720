// The Pterodactyl driver behind the GamePanel interface (contracts in ../game-panel.ts): one
// panel reached with an application key (provisioning, ./application.ts) and a client key of a
// root admin (everything on a server: ./servers.ts, ./files.ts, ./backups.ts, ./databases.ts,
// ./schedules.ts, ./subusers.ts), and Wings' console websocket (./console.ts). Servers and
// users are found by the platform's external ids, so a job run again continues its own work.

import type { DriverTiming, NodeAccess } from '../driver.ts';
import { UpstreamError } from '../errors.ts';
import type { GamePanel } from '../game-panel.ts';
import * as application from './application.ts';
import * as backups from './backups.ts';
import { PterodactylClient } from './client.ts';
import { type PterodactylConfig, parsePterodactylNode as parseNode } from './config.ts';
import { acceptClientFrame, openPterodactylConsole } from './console.ts';
import * as databases from './databases.ts';
import * as files from './files.ts';
import * as schedules from './schedules.ts';
import * as servers from './servers.ts';
import * as subusers from './subusers.ts';

export type { PterodactylConfig } from './config.ts';

/** A node row (credentials {app_key, client_key}; settings {panel_node?, tls_insecure?, tls_ca?}) as a configuration. */
export function parsePterodactylNode(node: NodeAccess, timing: DriverTiming): PterodactylConfig {
  return parseNode(node, timing);
}

export function createPterodactylPanel(config: PterodactylConfig): GamePanel {
  const client = new PterodactylClient(config);
  /** Every call: the configuration's problem first, then only UpstreamError, without secrets. */
  const call =
    <A extends unknown[], R>(run: (c: PterodactylClient, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      client.guard(() => run(client, ...args));

  const consoleCredentials = call(servers.consoleCredentials);

  return {
    ping: call(application.ping),
    consoleInput: () => acceptClientFrame,
    openConsole(ticket, events, options) {
      if (ticket.kind !== 'game') {
        throw new UpstreamError('rejected', `${client.label}: a game panel has no ${ticket.kind} console`, {
          retryable: false,
        });
      }
      return openPterodactylConsole(client, ticket, events, options, consoleCredentials);
    },
    close: () => client.close(),

    ensureUser: call(application.ensureUser),
    serverOwner: call(application.serverOwner),
    setUserPassword: call(application.setUserPassword),
    findServer: call(application.findServer),
    createServer: call(application.createServer),
    server: call(application.server),
    suspend: call((c, ref) => application.serverAction(c, ref, 'suspend')),
    unsuspend: call((c, ref) => application.serverAction(c, ref, 'unsuspend')),
    reinstall: call((c, ref) => application.serverAction(c, ref, 'reinstall')),
    deleteServer: call(application.deleteServer),

    details: call(servers.details),
    resources: call(servers.resources),
    activity: call(servers.activity),
    allocations: call(servers.allocations),
    consoleCredentials,
    command: call(servers.command),
    power: call(servers.power),
    startup: call(servers.startup),
    setVariable: call(servers.setVariable),
    rename: call(servers.rename),

    listFiles: call(files.listFiles),
    readFile: call(files.readFile),
    writeFile: call(files.writeFile),
    uploadFile: call(files.uploadFile),
    uploadUrl: call(files.uploadUrl),
    downloadUrl: call(files.downloadUrl),
    deleteFiles: call(files.deleteFiles),
    renameFiles: call(files.renameFiles),
    copyFile: call(files.copyFile),
    compressFiles: call(files.compressFiles),
    decompressFile: call(files.decompressFile),
    createFolder: call(files.createFolder),

    listBackups: call(backups.listBackups),
    createBackup: call(backups.createBackup),
    restoreBackup: call(backups.restoreBackup),
    deleteBackup: call(backups.deleteBackup),
    backupDownloadUrl: call(backups.backupDownloadUrl),

    listDatabases: call(databases.listDatabases),
    createDatabase: call(databases.createDatabase),
    deleteDatabase: call(databases.deleteDatabase),
    rotateDatabasePassword: call(databases.rotateDatabasePassword),

    listSchedules: call(schedules.listSchedules),
    createSchedule: call(schedules.createSchedule),
    updateSchedule: call(schedules.updateSchedule),
    deleteSchedule: call(schedules.deleteSchedule),
    executeSchedule: call(schedules.executeSchedule),

    listSubusers: call(subusers.listSubusers),
    inviteSubuser: call(subusers.inviteSubuser),
    updateSubuser: call(subusers.updateSubuser),
    removeSubuser: call(subusers.removeSubuser),
  };
}
