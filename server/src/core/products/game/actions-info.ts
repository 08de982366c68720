// Game actions, spec 4.9 Info and Console: what the server is and does (overview, live
// resources, the panel's activity log, our own events, its addresses, how far provisioning is)
// and its console (a one-time WebSocket ticket, a command, a power signal, the EULA).

import { Type } from 'typebox';
import { UpstreamError } from '../../../upstreams/errors.ts';
import { AppError } from '../../errors.ts';
import * as jobs from '../../jobs/job.repository.ts';
import { EVERY_STATE } from '../../product-kit/panel-action.ts';
import { eventsAction } from '../../product-kit/shared-actions.ts';
import { answer, gameAction, PlainText } from './action.ts';
import { ask, gameTarget, panelError, serverRefOf } from './server.ts';
import { activityView, allocationView, resourcesView } from './views.ts';

const EULA_FILE = '/eula.txt';

export const infoActions = [
  gameAction({
    name: 'overview',
    group: 'info',
    method: 'read',
    description: 'The server: name, limits, address, image, the panel status and the power state',
    params: {},
    handler: async (ctx) => {
      const [details, resources] = await ask(ctx, (panel, ref) =>
        Promise.all([panel.details(ref), panel.resources(ref).catch(() => null)]),
      );
      const primary = details.allocations.find((a) => a.isDefault) ?? details.allocations[0];
      return answer('Server loaded.', {
        server: {
          identifier: details.identifier,
          name: details.name,
          description: details.description,
          node: details.node,
          status: details.status ?? 'installed',
          power: resources?.state ?? 'unknown',
          address: primary ? allocationView(primary).address : null,
          sftp: { host: details.sftp.ip, port: details.sftp.port },
          limits: {
            memory_mb: details.limits.memory,
            cpu_percent: details.limits.cpu,
            disk_mb: details.limits.disk,
            databases: details.featureLimits.databases,
            backups: details.featureLimits.backups,
          },
          docker_image: details.dockerImage,
          startup: details.invocation,
        },
      });
    },
  }),
  gameAction({
    name: 'resources',
    group: 'info',
    method: 'read',
    description: 'Live power state, CPU, memory, disk, network and uptime',
    params: {},
    handler: async (ctx) => {
      const resources = await ask(ctx, (panel, ref) => panel.resources(ref));
      return answer('Resources loaded.', { resources: resourcesView(resources) });
    },
  }),
  gameAction({
    name: 'activity',
    group: 'info',
    method: 'read',
    description: "The panel's activity log of the server, newest first",
    params: {
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1 })),
      per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    },
    handler: async (ctx, p) => {
      const page = await ask(ctx, (panel, ref) => panel.activity(ref, Number(p.page ?? 1), Number(p.per_page ?? 25)));
      return answer('Activity loaded.', {
        activity: page.items.map(activityView),
        pagination: { page: page.page, per_page: page.perPage, total: page.total, pages: page.totalPages },
      });
    },
  }),
  eventsAction("The platform's events of the service (created, installed, suspended, …), newest first"),
  gameAction({
    name: 'network',
    group: 'info',
    method: 'read',
    description: 'The addresses (IP and port) players connect to',
    params: {},
    handler: async (ctx) => {
      const allocations = await ask(ctx, (panel, ref) => panel.allocations(ref));
      return answer('Network loaded.', { allocations: allocations.map(allocationView) });
    },
  }),
  gameAction({
    name: 'provision_status',
    group: 'info',
    method: 'read',
    description: "Where provisioning is: the service's status, the job's step and progress, the panel's install state",
    params: {},
    states: EVERY_STATE,
    handler: async (ctx) => {
      const job = await jobs.lastForService(ctx.db, ctx.service.id);
      const ref = serverRefOf(ctx.service);
      let panelStatus: string | null = null;
      if (ref && ['provisioning', 'active'].includes(ctx.service.status)) {
        try {
          const { panel } = await gameTarget(ctx);
          panelStatus = (await panel.server(ref)).status ?? 'installed';
        } catch {
          panelStatus = 'unknown';
        }
      }
      return answer('Provisioning status loaded.', {
        provision: {
          status: ctx.service.status,
          server_created: ref !== null,
          panel_status: panelStatus,
          job: job
            ? {
                id: job.id,
                type: job.type,
                status: job.status,
                step: job.step,
                progress: job.progress,
                error: job.error_message,
              }
            : null,
        },
      });
    },
  }),
];

export const consoleActions = [
  gameAction({
    name: 'console_ws',
    noStore: true,
    group: 'console',
    method: 'mutate',
    description: `A one-time ticket (60 s) for the server's console WebSocket: {ticket, url, expires_at}`,
    params: {},
    handler: async (ctx) => {
      if (!ctx.mintConsole) throw new Error('console_ws needs a route that mints console tickets');
      const { panel, ref } = await gameTarget(ctx);
      if (ctx.gate) await ctx.gate(ctx.service);
      let credentials: Awaited<ReturnType<typeof panel.consoleCredentials>>;
      try {
        credentials = await panel.consoleCredentials(ref);
      } catch (error) {
        throw panelError(error);
      }
      const ticket = await ctx.mintConsole({ kind: 'game', server: ref, ...credentials });
      return answer('Console ticket issued; open the URL within 60 seconds.', { console: ticket });
    },
  }),
  gameAction({
    name: 'command',
    group: 'console',
    method: 'mutate',
    description: 'Send one command to the server console, e.g. `say hello` (the server must be running)',
    params: { command: PlainText({ minLength: 1, maxLength: 1000, description: 'one console line' }) },
    example: () => ({ command: 'list' }),
    handler: async (ctx, p) => {
      const { panel, ref } = await gameTarget(ctx);
      try {
        await panel.command(ref, String(p.command));
      } catch (error) {
        if (error instanceof UpstreamError && /must be online/i.test(`${error.detail ?? ''} ${error.message}`)) {
          throw new AppError('conflict', { message: 'Start the server before sending commands.' });
        }
        throw panelError(error);
      }
      return answer('Command sent.', { command: p.command });
    },
  }),
  gameAction({
    name: 'power',
    group: 'console',
    method: 'mutate',
    description:
      'A power signal: start, stop (the game saves and exits), restart, or kill (at once, unsaved work lost)',
    params: {
      signal: Type.Union([Type.Literal('start'), Type.Literal('stop'), Type.Literal('restart'), Type.Literal('kill')]),
    },
    example: () => ({ signal: 'start' }),
    handler: async (ctx, p) => {
      const signal = p.signal as 'start' | 'stop' | 'restart' | 'kill';
      await ask(ctx, (panel, ref) => panel.power(ref, signal));
      return answer(`${signal} sent.`, { signal }, 202);
    },
  }),
  gameAction({
    name: 'eula_accept',
    group: 'console',
    method: 'mutate',
    description: "Accept the game's licence (Minecraft: eula=true in eula.txt); needed before the first start",
    params: {},
    handler: async (ctx) => {
      await ask(ctx, async (panel, ref) => {
        let text = '';
        try {
          text = (await panel.readFile(ref, EULA_FILE, 64 * 1024)).toString('utf8');
        } catch (error) {
          if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
        }
        const accepted = /^\s*eula\s*=/m.test(text)
          ? text.replace(/^(\s*eula\s*=\s*)\S*/m, '$1true')
          : `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}eula=true\n`;
        await panel.writeFile(ref, EULA_FILE, accepted);
      });
      return answer('EULA accepted.', { eula: true });
    },
  }),
];
