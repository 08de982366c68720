// What a fresh panel holds before anyone provisions: the root admin (user 1) with an application
// key and a client key, location 1 "mum", node 1 with 100 free allocations on 127.0.0.1:25565+,
// the Minecraft nest (Paper egg 3, Bedrock egg 6), a Steam nest (Valheim egg 14) and one
// database host. Egg variables and rules follow the official eggs.

import { randomBytes, randomUUID } from 'node:crypto';
import { atom, type Egg, type EggVariable, type PanelState } from './state.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function randomString(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i] ?? 0) % ALPHABET.length];
  return out;
}

/** A 48-character key: prefix (5) + 11 random = identifier (16), then a 32-character secret. */
export function makeKey(prefix: 'ptla_' | 'ptlc_'): string {
  return `${prefix}${randomString(11)}${randomString(32)}`;
}

export function checkKey(key: string, prefix: 'ptla_' | 'ptlc_'): void {
  if (key.length !== 48 || !key.startsWith(prefix)) {
    throw new Error(`${prefix} key must be 48 characters starting with ${prefix}`);
  }
}

export const PANEL_NODE_ID = 1;
export const FIRST_PORT = 25565;
export const ALLOCATIONS = 100;

type VarSpec = [
  name: string,
  env: string,
  def: string,
  viewable: boolean,
  editable: boolean,
  rules: string,
  desc: string,
];

function eggVars(state: PanelState, eggId: number, specs: VarSpec[]): EggVariable[] {
  return specs.map(([name, env, def, viewable, editable, rules, desc]) => ({
    id: state.next('variable'),
    eggId,
    name,
    description: desc,
    envVariable: env,
    defaultValue: def,
    userViewable: viewable,
    userEditable: editable,
    rules,
  }));
}

function eggs(state: PanelState): Egg[] {
  const paper: Egg = {
    id: 3,
    uuid: randomUUID(),
    nestId: 1,
    name: 'Paper',
    author: 'parker@pterodactyl.io',
    description: 'High performance Spigot fork that aims to fix gameplay and mechanics inconsistencies.',
    features: ['eula', 'java_version', 'pid_limit'],
    dockerImages: {
      'Java 21': 'ghcr.io/pterodactyl/yolks:java_21',
      'Java 17': 'ghcr.io/pterodactyl/yolks:java_17',
      'Java 16': 'ghcr.io/pterodactyl/yolks:java_16',
      'Java 11': 'ghcr.io/pterodactyl/yolks:java_11',
      'Java 8': 'ghcr.io/pterodactyl/yolks:java_8',
    },
    startup:
      'java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -Dterminal.ansi=true -jar {{SERVER_JARFILE}}',
    variables: [],
    game: 'paper',
  };
  paper.variables = eggVars(state, 3, [
    [
      'Minecraft Version',
      'MINECRAFT_VERSION',
      'latest',
      true,
      true,
      'nullable|string|max:20',
      'The version of minecraft to download. \r\n\r\nLeave at latest to always get the latest version. Invalid versions will default to latest.',
    ],
    [
      'Server Jar File',
      'SERVER_JARFILE',
      'server.jar',
      true,
      true,
      'required|regex:/^([\\w\\d._-]+)(\\.jar)$/',
      'The name of the server jarfile to run the server with.',
    ],
    [
      'Download Path',
      'DL_PATH',
      '',
      false,
      false,
      'nullable|string',
      'A URL to use to download a server.jar rather than the ones in the install script. This is not user viewable.',
    ],
    [
      'Build Number',
      'BUILD_NUMBER',
      'latest',
      true,
      true,
      'required|string|max:20',
      'The build number for the paper release.\r\n\r\nLeave at latest to always get the latest version. Invalid versions will default to latest.',
    ],
  ]);
  const bedrock: Egg = {
    id: 6,
    uuid: randomUUID(),
    nestId: 1,
    name: 'Bedrock',
    author: 'parker@pterodactyl.io',
    description: 'Bedrock Edition (also known as the Bedrock Version) dedicated server.',
    features: null,
    dockerImages: { 'ghcr.io/parkervcp/yolks:debian': 'ghcr.io/parkervcp/yolks:debian' },
    startup: './bedrock_server',
    variables: [],
    game: 'bedrock',
  };
  bedrock.variables = eggVars(state, 6, [
    ['Bedrock Version', 'BEDROCK_VERSION', 'latest', true, true, 'required|string', 'The version of bedrock.'],
    ['ld library path', 'LD_LIBRARY_PATH', '.', true, false, 'required|string', 'Library path for the server.'],
    [
      'Server Name',
      'SERVERNAME',
      'Bedrock Dedicated Server',
      true,
      true,
      'required|string|max:64',
      'The name for the server',
    ],
    [
      'Gamemode',
      'GAMEMODE',
      'survival',
      true,
      true,
      'required|string|in:survival,creative,adventure',
      'Allowed values: "survival", "creative", or "adventure"',
    ],
  ]);
  const valheim: Egg = {
    id: 14,
    uuid: randomUUID(),
    nestId: 2,
    name: 'Valheim',
    author: 'parker@parkervcp.com',
    description: 'Valheim dedicated server.',
    features: ['steam_disk_space'],
    dockerImages: { 'ghcr.io/parkervcp/steamcmd:debian': 'ghcr.io/parkervcp/steamcmd:debian' },
    startup:
      './valheim_server.x86_64 -nographics -batchmode -name "{{SERVER_NAME}}" -port {{SERVER_PORT}} -world "{{WORLD}}" -password "{{PASSWORD}}" -public {{PUBLIC}}',
    variables: [],
    game: 'valheim',
  };
  valheim.variables = eggVars(state, 14, [
    ['Server Name', 'SERVER_NAME', 'Valheim Server', true, true, 'required|string|max:64', 'The server name.'],
    ['World Name', 'WORLD', 'Dedicated', true, true, 'required|string|max:20', 'The world name.'],
    [
      'Password',
      'PASSWORD',
      'changeme',
      true,
      true,
      'required|string|min:5|max:20',
      'Server password (5 characters minimum).',
    ],
    ['Public', 'PUBLIC', '1', true, true, 'required|boolean', 'List the server publicly.'],
    ['Steam App ID', 'SRCDS_APPID', '896660', true, false, 'required|string|in:896660', 'Steam app id.'],
  ]);
  return [paper, bedrock, valheim];
}

/** Fill an empty state; returns the two keys it made (or was given). */
export function seed(state: PanelState, appKey: string, clientKey: string, panelUrl: string): void {
  void panelUrl;
  const now = atom();
  state.users.set(1, {
    id: 1,
    uuid: randomUUID(),
    username: 'admin',
    email: 'admin@example.com',
    firstName: 'Admin',
    lastName: 'User',
    externalId: null,
    language: 'en',
    rootAdmin: true,
    createdAt: now,
    updatedAt: now,
  });
  state.counters.user = 1;
  state.locations.set(1, { id: 1, short: 'mum', long: 'Mumbai' });
  state.nodes.set(PANEL_NODE_ID, {
    id: PANEL_NODE_ID,
    uuid: randomUUID(),
    name: 'node-1',
    fqdn: '127.0.0.1',
    locationId: 1,
    sftpPort: 2022,
    maintenance: false,
    daemonToken: randomString(64),
  });
  for (let i = 0; i < ALLOCATIONS; i++) {
    const id = state.next('allocation');
    state.allocations.set(id, {
      id,
      nodeId: PANEL_NODE_ID,
      ip: '127.0.0.1',
      alias: null,
      port: FIRST_PORT + i,
      notes: null,
      serverId: null,
    });
  }
  state.nests.set(1, {
    id: 1,
    uuid: randomUUID(),
    author: 'support@pterodactyl.io',
    name: 'Minecraft',
    description: 'Minecraft - the classic game from Mojang. With support for Vanilla MC, Spigot, and many others!',
  });
  state.nests.set(2, {
    id: 2,
    uuid: randomUUID(),
    author: 'support@pterodactyl.io',
    name: 'Steam Games',
    description: 'Dedicated servers for games distributed through Steam.',
  });
  for (const egg of eggs(state)) state.eggs.set(egg.id, egg);
  state.databaseHosts.set(1, { id: 1, name: 'local', host: '127.0.0.1', port: 3306 });
  setKeys(state, appKey, clientKey);
}

/** Make the two keys of user 1 the given ones (replacing earlier ones of the same type). */
export function setKeys(state: PanelState, appKey: string, clientKey: string): void {
  for (const [id, key] of state.keys) if (key.userId === 1) state.keys.delete(id);
  state.keys.set(appKey.slice(0, 16), {
    identifier: appKey.slice(0, 16),
    secret: appKey.slice(16),
    type: 2,
    userId: 1,
  });
  state.keys.set(clientKey.slice(0, 16), {
    identifier: clientKey.slice(0, 16),
    secret: clientKey.slice(16),
    type: 1,
    userId: 1,
  });
}
