// Game servers: ordered and sold today; provisioning arrives with the game panel driver.

import { AppError } from '../../errors.ts';
import { catalogOnlyProduct } from '../catalog-only.ts';

export const gameProduct = catalogOnlyProduct({
  type: 'game',
  nodeKind: 'pterodactyl',
  specRules: {
    game: { kind: 'slug' },
    ram_mb: { kind: 'int', min: 512, max: 65_536 },
    cpu_percent: { kind: 'int', min: 25, max: 1600 },
    disk_gb: { kind: 'int', min: 1, max: 1024 },
    slots: { kind: 'int', min: 1, max: 1000 },
  },
  order: {
    keys: ['server_name', 'region', 'eula'],
    domain: 'refused',
    eulaRequired: 'must be true: the game server licence (e.g. the Minecraft EULA) must be accepted',
  },
  wrongType: () => new AppError('not_game_service'),
});
