// instances list|show|create|power|delete. list and show cover every type (vps, baremetal, game,
// web: GET /api/v1/instances); create, delete and shutdown/reboot/power_cycle are the second
// surface's (KVM and bare metal); start/stop/restart/kill are /api/v1's actions (game servers too).

import { readFileSync } from 'node:fs';
import {
  HostplaneError,
  type Instance,
  type InstanceDetail,
  type Job,
  type Service,
  type ServicePowerAction,
} from '@hostplane/sdk';
import type { Argv } from 'yargs';
import { CliError, UsageError } from '../errors.ts';
import { type Cell, fields, json, msg, note, rupees, type Safe, state, write } from '../output.ts';
import { follow } from '../progress.ts';
import { ask } from '../prompt.ts';
import { type GlobalArgs, session } from '../session.ts';
import { SERVICE_TYPES, serviceFields, serviceTable } from './service-views.ts';

/** On every service with power (/api/v1), then the second surface's KVM and bare-metal ones. */
const POWER = ['start', 'stop', 'restart', 'kill', 'shutdown', 'reboot', 'power_cycle'] as const;
const isServicePower = (a: (typeof POWER)[number]): a is ServicePowerAction =>
  a === 'start' || a === 'stop' || a === 'restart' || a === 'kill';

function memory(bytes: number | null | undefined): string | null {
  return bytes === null || bytes === undefined ? null : `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

export function instanceFields(i: Instance | InstanceDetail): [string, Cell][] {
  return [
    ['id', i.id],
    ['label', i.label],
    ['type', i.type],
    ['status', state(i.status)],
    ['power', state(i.power)],
    ['plan', `${i.plan.label} (${i.plan.name})`],
    ['region', `${i.region.code} (${i.region.name})`],
    ['ipv4', i.ipv4],
    ['reverse dns', i.ptr],
    ['hostname', i.hostname],
    ['image', i.os],
    ['price', `${rupees(i.price.monthly)}/month`],
    ['paid until', i.paid_until],
    ['cpu', i.utilisation?.cpu === null || i.utilisation === null ? null : `${Math.round(i.utilisation.cpu * 100)}%`],
    [
      'memory',
      i.utilisation
        ? `${memory(i.utilisation.memory_used_bytes) ?? '?'} / ${memory(i.utilisation.memory_total_bytes)}`
        : null,
    ],
    ['created', i.created_at],
  ];
}

function jobLine(job: Job): Safe {
  const finished = job.status === 'succeeded' || job.status === 'failed';
  return msg`job ${job.id} (${job.type}) ${state(job.status)}${finished ? '' : msg` ${job.progress}%`}`;
}

/** Print a job as the answer of a command that started it (`done`: a message made with msg). */
export function printJob(argv: GlobalArgs, job: Job, done: Safe): void {
  if (argv.output === 'json') json(job);
  else write(job.status === 'succeeded' ? done : msg`${jobLine(job)}: follow it with --wait`);
}

export function instanceCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(['instances', 'instance'], 'Your services: vps, bare metal, game and web', (c) =>
    c
      .command(
        ['list', 'ls'],
        'Your services of every type (vps, baremetal, game, web) with their power state',
        (cc) =>
          cc
            .option('type', {
              alias: 't',
              choices: SERVICE_TYPES,
              describe: 'only this type (kvm is vps)',
            })
            .example('$0 instances list --type game', '')
            .example('$0 instances list -o json', 'the objects of GET /api/v1/instances'),
        async (argv) => {
          const { client } = session(argv);
          const type = argv.type === 'kvm' ? 'vps' : argv.type;
          const all: Service[] = [];
          for await (const service of client.services()) if (!type || service.type === type) all.push(service);
          if (argv.output === 'json') return json(all);
          if (all.length === 0) {
            return note(
              type
                ? msg`No ${type} services.`
                : 'No services: create one with `hostplane instances create` (or order one in the panel).',
            );
          }
          write(serviceTable(all, type));
        },
      )
      .command(
        'show <id>',
        'One service of any type, with its login details and live figures',
        (cc) =>
          cc
            .positional('id', { type: 'number', demandOption: true, describe: 'its id (the ID column)' })
            .option('show-password', { type: 'boolean', default: false, describe: 'print the password' }),
        async (argv) => {
          const { client } = session(argv);
          const service = await client.getService(argv.id);
          if (argv.output === 'json') return json(service);
          write(fields(await serviceFields(client, service, argv.showPassword)));
        },
      )
      .command(
        'create',
        'Deploy an instance, paid from the wallet, and follow it until it is active',
        (cc) =>
          cc
            .option('plan', { type: 'string', demandOption: true, describe: 'plan label (hostplane plans list)' })
            .option('hostname', { type: 'string', demandOption: true, describe: 'its first label names the instance' })
            .option('region', { type: 'string', describe: "region code (default: the plan's first open region)" })
            .option('image', { type: 'string', describe: 'image id (default: the first image for the type)' })
            .option('type', { choices: ['kvm', 'baremetal'] as const, describe: "default: the plan's" })
            .option('ssh-key', {
              type: 'array',
              number: true,
              default: [] as number[],
              describe: 'SSH key id (repeatable)',
            })
            .option('idempotency-key', { type: 'string', describe: 'repeat a deploy safely (made up unless given)' })
            .option('user-data', {
              type: 'string',
              describe:
                'a file of cloud-init user data run at first boot (KVM; at most 64 KiB; - reads standard input)',
            })
            .option('wait', { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' })
            .example('$0 instances create --plan vps-1c-1g --hostname web1', ''),
        async (argv) => {
          const { client } = session(argv);
          let { region, image, type } = argv;
          if (!region || !image || !type) {
            const plan = (await client.listPlans()).find((p) => p.label === argv.plan);
            if (!plan) throw new UsageError(msg`no KVM or bare-metal plan ${argv.plan} (hostplane plans list)`.text);
            type ??= plan.type as 'kvm' | 'baremetal';
            region ??= plan.regions.find((r) => r.available)?.code;
            if (!region) throw new CliError(msg`${plan.label} cannot be deployed in any region now`.text);
            if (!image) {
              // The newest Ubuntu that installs on the type, else the first image that does.
              const images = (await client.listImages()).filter((i) => i.types.includes(type as string));
              const ubuntu = images
                .filter((i) => i.family.toLowerCase() === 'ubuntu')
                .sort((a, b) => b.version.localeCompare(a.version, 'en', { numeric: true }));
              image = (ubuntu[0] ?? images[0])?.id;
              if (!image) throw new CliError(msg`no image installs on ${type}`.text);
            }
          }
          const userData = argv.userData === undefined ? undefined : readUserData(argv.userData);
          const sshKeys = (argv.sshKey as (number | string)[]).map(Number);
          if (sshKeys.some((k) => !Number.isInteger(k) || k < 1)) throw new UsageError('--ssh-key takes key ids');
          if (argv.output !== 'json')
            note(msg`Deploying ${argv.plan} (${type}) in ${region} with ${image} as ${argv.hostname}…`);
          const placed = await client.createInstance({
            type,
            plan: argv.plan,
            region,
            image,
            hostname: argv.hostname,
            ...(sshKeys.length > 0 ? { ssh_key_ids: sshKeys } : {}),
            ...(argv.idempotencyKey ? { idempotency_key: argv.idempotencyKey } : {}),
            ...(userData === undefined ? {} : { user_data: userData }),
          });
          let job = placed.job;
          let instance: Instance | InstanceDetail = placed.instance;
          if (argv.wait) {
            job = await follow(client, job, `create ${placed.instance.label}`);
            instance = await client.getInstance(placed.instance.id);
          }
          if (argv.output === 'json') return json({ instance, order: placed.order, job });
          write(fields(instanceFields(instance)));
          if (!argv.wait) note(msg`${jobLine(job)}: see it with \`hostplane instances show ${instance.id}\``);
        },
      )
      .command(
        'power <id> <action>',
        'start, stop, restart or kill (any service with power: vps, bare metal, game); shutdown (ACPI), ' +
          'reboot (graceful) or power_cycle (hard): KVM and bare metal',
        (cc) =>
          cc
            .positional('id', { type: 'number', demandOption: true })
            .positional('action', { choices: POWER, demandOption: true })
            .option('wait', { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' })
            .example('$0 instances power 42 restart', 'a game server: stop, then start'),
        async (argv) => {
          const { client } = session(argv);
          let job: Job;
          if (isServicePower(argv.action)) job = await client.powerService(argv.id, argv.action);
          else {
            try {
              job = await client.powerInstance(argv.id, argv.action);
            } catch (error) {
              // The second surface knows KVM and bare metal only: a game server is not found there.
              if (error instanceof HostplaneError && error.code === 'not_owner') {
                error.message += ` (${argv.action} is for KVM and bare metal; a game server takes start, stop, restart or kill)`;
              }
              throw error;
            }
          }
          if (argv.wait) job = await follow(client, job, `${argv.action} ${argv.id}`);
          printJob(argv, job, msg`Instance ${argv.id}: ${argv.action} done.`);
        },
      )
      .command(
        ['delete <id>', 'rm <id>'],
        'Delete an instance and its disks (asks for its label unless --yes)',
        (cc) =>
          cc
            .positional('id', { type: 'number', demandOption: true })
            .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'do not ask' })
            .option('wait', { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' }),
        async (argv) => {
          const { client } = session(argv);
          const instance = await client.getInstance(argv.id);
          if (!argv.yes) {
            note(
              msg`This deletes instance ${instance.id} (${instance.label}, ${instance.ipv4 ?? 'no IPv4'}) and its disks.`,
            );
            const typed = await ask(msg`Type its label (${instance.label}) to confirm: `.text);
            if (typed !== instance.label) throw new CliError('the label does not match: nothing was deleted');
          }
          let job = await client.deleteInstance(instance.id, instance.label);
          if (argv.wait) job = await follow(client, job, `delete ${instance.label}`);
          printJob(argv, job, msg`Instance ${instance.id} (${instance.label}) deleted.`);
        },
      )
      .demandCommand(1, 'Name an instances command: list, show, create, power or delete.'),
  );
}

/** The text of `--user-data FILE` (`-` standard input); the server checks its size and type. */
function readUserData(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(msg`--user-data: cannot read ${file} (${(error as Error).message})`.text);
  }
}
