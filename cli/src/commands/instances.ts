// instances list|show|create|power|delete: KVM and bare-metal instances (the second surface).

import type { Instance, InstanceDetail, Job } from '@hostplane/sdk';
import type { Argv } from 'yargs';
import { CliError, UsageError } from '../errors.ts';
import { type Cell, fields, json, msg, note, out, paint, rupees, type Safe, state, table, write } from '../output.ts';
import { follow } from '../progress.ts';
import { ask } from '../prompt.ts';
import { type GlobalArgs, session } from '../session.ts';

const POWER = ['start', 'shutdown', 'reboot', 'power_cycle'] as const;

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
  return y.command(['instances', 'instance'], 'KVM and bare-metal instances', (c) =>
    c
      .command(
        ['list', 'ls'],
        'Your instances with their power and utilisation',
        (cc) => cc,
        async (argv) => {
          const { client } = session(argv);
          const all: Instance[] = [];
          for await (const instance of client.instances()) all.push(instance);
          if (argv.output === 'json') return json(all);
          if (all.length === 0) return note('No instances: create one with `hostplane instances create`.');
          write(
            table(
              ['ID', 'LABEL', 'TYPE', 'STATUS', 'POWER', 'IPV4', 'REGION', 'PLAN'],
              all.map((i) => [
                i.id,
                i.label,
                i.type,
                state(i.status),
                state(i.power),
                i.ipv4,
                i.region.code,
                i.plan.label,
              ]),
            ),
          );
        },
      )
      .command(
        'show <id>',
        'One instance, with its login details',
        (cc) =>
          cc
            .positional('id', { type: 'number', demandOption: true, describe: 'instance id' })
            .option('show-password', { type: 'boolean', default: false, describe: 'print the root password' }),
        async (argv) => {
          const { client } = session(argv);
          const instance = await client.getInstance(argv.id);
          if (argv.output === 'json') return json(instance);
          const c = instance.credentials;
          write(
            fields([
              ...instanceFields(instance),
              ['last job', instance.last_job ? jobLine(instance.last_job) : null],
              ['username', c?.username ?? null],
              ['password', c ? (argv.showPassword ? c.password : paint(out.dim, '(hidden: --show-password)')) : null],
            ]),
          );
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
        'start, shutdown (ACPI), reboot (graceful) or power_cycle (hard)',
        (cc) =>
          cc
            .positional('id', { type: 'number', demandOption: true })
            .positional('action', { choices: POWER, demandOption: true })
            .option('wait', { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' }),
        async (argv) => {
          const { client } = session(argv);
          let job =
            argv.action === 'start'
              ? await client.startInstance(argv.id)
              : await client.powerInstance(argv.id, argv.action);
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
