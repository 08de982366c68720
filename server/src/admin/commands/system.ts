import { Migrator } from 'kysely';
import { effectiveSettings } from '../../config-effective.ts';
import { checkDatabase } from '../../core/system/health.ts';
import { loadInstallationId, rotateInstallationId } from '../../core/system/installation.ts';
import { migrations } from '../../db/migrations/index.ts';
import { type Command, table } from '../command.ts';

export const systemCommands: Command[] = [
  {
    noun: 'system',
    verb: 'info',
    summary: 'Database engine and version, schema migrations, mode',
    async run(deps) {
      const health = await checkDatabase(deps.database);
      const migrator = new Migrator({ db: deps.database.db, provider: { getMigrations: async () => migrations } });
      const known = await migrator.getMigrations();
      const json = {
        engine: deps.database.engine,
        db_version: health.ok ? health.version : null,
        database: health.ok ? 'connected' : `unreachable: ${health.error}`,
        migrations: {
          applied: known.filter((m) => m.executedAt).length,
          pending: known.filter((m) => !m.executedAt).map((m) => m.name),
        },
        demo: deps.config.demo,
        data_dir: deps.config.dataDir,
        public_url: deps.config.publicUrl,
      };
      const text = [
        `engine      ${json.engine} ${json.db_version ?? ''}`.trimEnd(),
        `database    ${json.database}`,
        `migrations  ${json.migrations.applied} applied, ${json.migrations.pending.length} pending`,
        `demo        ${json.demo ? 'on' : 'off'}`,
        `data dir    ${json.data_dir}`,
        `public url  ${json.public_url}`,
      ].join('\n');
      return { text, json };
    },
  },
  {
    noun: 'system',
    verb: 'settings',
    summary: 'The configuration in effect (every variable, its value and default; secrets only "set"/"unset")',
    async run(deps) {
      const rows = effectiveSettings(deps.config);
      return {
        json: rows,
        text: table(
          rows.map((r) => ({ ...r })),
          ['name', 'value', 'default'],
        ),
      };
    },
  },
];

export const installationCommands: Command[] = [
  {
    noun: 'install-id',
    verb: 'show',
    summary: "This installation's id (the namespace of the external ids it creates on panels)",
    async run(deps) {
      const id = await loadInstallationId(deps.database.db);
      return { text: id, json: { installation_id: id } };
    },
  },
  {
    noun: 'install-id',
    verb: 'rotate',
    summary: 'Give this installation a new id (a staging copy of production must); restart every process after',
    async run(deps) {
      const { previous, id } = await rotateInstallationId(deps.database.db, deps.clock());
      // This process names new upstream resources with the new id at once; others on restart.
      (deps.installation as { id: string }).id = id;
      return {
        text: `installation id ${previous} -> ${id}; restart the other processes (api, worker) so they use it`,
        json: { previous, installation_id: id },
      };
    },
  },
];
