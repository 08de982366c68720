// plans list, quote, ssh-keys, snapshots, billing (orders and invoices: invoices.ts).

import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import type { Argv } from 'yargs';
import { CliError, UsageError } from '../errors.ts';
import { fields, json, msg, note, out, paint, rupees, table, write } from '../output.ts';
import { follow } from '../progress.ts';
import { ask } from '../prompt.ts';
import { type GlobalArgs, session } from '../session.ts';
import { printJob } from './instances.ts';

function specs(s: Record<string, unknown>): string {
  const parts: string[] = [];
  if (s.vcpu !== undefined) parts.push(`${s.vcpu} vCPU`);
  if (typeof s.ram_mb === 'number') parts.push(`${s.ram_mb / 1024} GB RAM`);
  if (s.disk_gb !== undefined) parts.push(`${s.disk_gb} GB disk`);
  for (const [k, v] of Object.entries(s)) if (!['vcpu', 'ram_mb', 'disk_gb'].includes(k)) parts.push(`${k} ${v}`);
  return parts.join(', ');
}

/** Larger than any OpenSSH public key line (an 16384-bit RSA key is about 2,800 characters). */
const MAX_KEY_FILE = 16 * 1024;
/** The key types OpenSSH writes to a .pub file: ssh-ed25519, ssh-rsa, ecdsa-sha2-*, sk-* (and their certificates). */
const PUBLIC_KEY_LINE = /^(?:ssh-|ecdsa-|sk-)[a-z0-9@.-]+ [A-Za-z0-9+/]+={0,3}(?: .*)?$/;

/**
 * The one public-key line of `file`, or a refusal before any request: `ssh-keys add` sends what
 * it reads, and the file next to `id_ed25519.pub` is the private key.
 */
function publicKeyLine(file: string): string {
  let text: string;
  try {
    if (statSync(file).size > MAX_KEY_FILE) throw new UsageError(`${file} is too large to be an OpenSSH public key`);
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  if (/-----BEGIN|PRIVATE KEY|PuTTY-User-Key-File/.test(text)) {
    throw new UsageError(
      `${file} is a PRIVATE key: it was not sent. Never share it; add the public key instead (usually ${
        file.endsWith('.pub') ? 'the .pub file beside it' : `${file}.pub`
      }).`,
    );
  }
  if (text.includes('\n') || !PUBLIC_KEY_LINE.test(text)) {
    throw new UsageError(
      `${file} is not an OpenSSH public key: expected one line such as "ssh-ed25519 AAAA… you@host" ` +
        '(the .pub file ssh-keygen wrote). Nothing was sent.',
    );
  }
  return text;
}

const waitOption = { type: 'boolean', default: true, describe: 'follow the job (--no-wait: return at once)' } as const;

export function accountCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y
    .command(['plans', 'plan'], 'Plans and prices', (c) =>
      c
        .command(
          ['list', 'ls'],
          'KVM and bare-metal plans (--all: game and web too)',
          (cc) => cc.option('all', { type: 'boolean', default: false }),
          async (argv) => {
            const { client } = session(argv);
            const plans = argv.all ? await client.listAllPlans() : await client.listPlans();
            if (argv.output === 'json') return json(plans);
            write(
              table(
                ['LABEL', 'NAME', 'TYPE', 'SPECS', 'PRICE/MONTH', 'REGIONS'],
                plans.map((p) => [
                  p.label,
                  p.name,
                  p.type,
                  specs(p.specs),
                  p.price.includes_gst ? rupees(p.price.monthly) : `${rupees(p.price.monthly)} + GST`,
                  p.regions
                    .filter((r) => r.available)
                    .map((r) => r.code)
                    .join(',') || paint(out.dim, 'none open'),
                ]),
              ),
            );
          },
        )
        .demandCommand(1, 'Name a plans command: list.'),
    )
    .command(
      'quote <plan>',
      'Price and spec of a plan',
      (c) => c.positional('plan', { type: 'string', demandOption: true, describe: 'plan label or id' }),
      async (argv) => {
        const { client } = session(argv);
        const quote = await client.quote(/^\d+$/.test(argv.plan) ? Number(argv.plan) : argv.plan);
        if (argv.output === 'json') return json(quote);
        write(
          fields([
            ['plan', `${quote.plan.label} (${quote.plan.name})`],
            ['type', quote.plan.type],
            ['specs', specs(quote.plan.specs)],
            ['price', `${rupees(quote.price.monthly)}/month${quote.price.includes_gst ? ' (GST included)' : ' + GST'}`],
            [quote.price.includes_gst ? 'GST in it' : 'GST', `${rupees(quote.price.gst)} (18 %)`],
            ['charged', `${rupees(quote.price.monthly_with_gst)}/month from your wallet`],
            [
              'regions',
              quote.plan.regions
                .filter((r) => r.available)
                .map((r) => r.code)
                .join(', ') || 'none open',
            ],
          ]),
        );
      },
    )
    .command(['ssh-keys', 'ssh-key'], 'SSH keys installed on new instances', (c) =>
      c
        .command(
          ['list', 'ls'],
          'Your SSH keys',
          (cc) => cc,
          async (argv) => {
            const { client } = session(argv);
            const keys = await client.listSshKeys();
            if (argv.output === 'json') return json(keys);
            if (keys.length === 0) return note('No SSH keys: add one with `hostplane ssh-keys add`.');
            write(
              table(
                ['ID', 'NAME', 'TYPE', 'FINGERPRINT', 'CREATED'],
                keys.map((k) => [k.id, k.name, k.type, k.fingerprint, k.created_at]),
              ),
            );
          },
        )
        .command(
          'add [file]',
          'Add a public key (default ~/.ssh/id_ed25519.pub)',
          (cc) =>
            cc
              .positional('file', { type: 'string', describe: 'an OpenSSH .pub file' })
              .option('name', { type: 'string', describe: "default: the key's comment, else the file name" }),
          async (argv) => {
            const file = argv.file ?? join(homedir(), '.ssh', 'id_ed25519.pub');
            // Looked at before anything is sent: a private key must never leave this machine.
            const line = publicKeyLine(file);
            const { client } = session(argv);
            const name = argv.name ?? (line.split(/\s+/).slice(2).join(' ') || basename(file));
            const key = await client.addSshKey(name, line);
            if (argv.output === 'json') return json(key);
            write(msg`Added SSH key ${key.id} (${key.name}, ${key.fingerprint}).`);
          },
        )
        .command(
          ['delete <id>', 'rm <id>'],
          'Delete an SSH key (instances deployed with it keep it)',
          (cc) => cc.positional('id', { type: 'number', demandOption: true }),
          async (argv) => {
            const { client } = session(argv);
            const key = await client.deleteSshKey(argv.id);
            if (argv.output === 'json') return json(key);
            write(msg`Deleted SSH key ${key.id} (${key.name}).`);
          },
        )
        .demandCommand(1, 'Name an ssh-keys command: list, add or delete.'),
    )
    .command(['snapshots', 'snapshot'], 'Disk snapshots of KVM instances', (c) =>
      c
        .command(
          ['list <instance>', 'ls <instance>'],
          "An instance's snapshots",
          (cc) => cc.positional('instance', { type: 'number', demandOption: true }),
          async (argv) => {
            const { client } = session(argv);
            const { snapshots, limit } = await client.listSnapshots(argv.instance);
            if (argv.output === 'json') return json({ snapshots, limit });
            if (snapshots.length > 0) {
              write(
                table(
                  ['ID', 'DESCRIPTION', 'CREATED', 'PARENT'],
                  snapshots.map((s) => [s.id, s.description, s.created_at, s.parent]),
                ),
              );
            }
            note(msg`${snapshots.length} of ${limit} snapshots.`);
          },
        )
        .command(
          'create <instance> <name>',
          'Take a snapshot of the disks (RAM is not saved)',
          (cc) =>
            cc
              .positional('instance', { type: 'number', demandOption: true })
              .positional('name', {
                type: 'string',
                demandOption: true,
                describe: 'a letter, then letters, digits, _ or -',
              })
              .option('description', { type: 'string' })
              .option('wait', waitOption),
          async (argv) => {
            const { client } = session(argv);
            let job = await client.createSnapshot(argv.instance, argv.name, argv.description);
            if (argv.wait) job = await follow(client, job, `snapshot ${argv.name}`);
            printJob(argv, job, msg`Snapshot ${argv.name} of instance ${argv.instance} taken.`);
          },
        )
        .command(
          'restore <instance> <snapshot>',
          'Roll the disks back to a snapshot (asks for the label unless --yes)',
          (cc) =>
            cc
              .positional('instance', { type: 'number', demandOption: true })
              .positional('snapshot', { type: 'string', demandOption: true })
              .option('yes', { alias: 'y', type: 'boolean', default: false })
              .option('wait', waitOption),
          async (argv) => {
            const { client } = session(argv);
            if (!argv.yes) {
              const instance = await client.getInstance(argv.instance);
              note(msg`This rolls the disks of ${instance.label} back to ${argv.snapshot}: later changes are lost.`);
              const typed = await ask(msg`Type its label (${instance.label}) to confirm: `.text);
              if (typed !== instance.label) throw new CliError('the label does not match: nothing was restored');
            }
            let job = await client.restoreSnapshot(argv.instance, argv.snapshot);
            if (argv.wait) job = await follow(client, job, `restore ${argv.snapshot}`);
            printJob(argv, job, msg`Instance ${argv.instance} restored to ${argv.snapshot}.`);
          },
        )
        .command(
          ['delete <instance> <snapshot>', 'rm <instance> <snapshot>'],
          'Delete a snapshot',
          (cc) =>
            cc
              .positional('instance', { type: 'number', demandOption: true })
              .positional('snapshot', { type: 'string', demandOption: true })
              .option('wait', waitOption),
          async (argv) => {
            const { client } = session(argv);
            let job = await client.deleteSnapshot(argv.instance, argv.snapshot);
            if (argv.wait) job = await follow(client, job, `delete ${argv.snapshot}`);
            printJob(argv, job, msg`Snapshot ${argv.snapshot} deleted.`);
          },
        )
        .demandCommand(1, 'Name a snapshots command: list, create, restore or delete.'),
    )
    .command(
      'billing',
      'Wallet balance, monthly run-rate, unpaid orders and the next renewals (GET /api/v1/billing)',
      (c) => c.example('$0 billing -o json', 'the answer of GET /api/v1/billing'),
      async (argv) => {
        const { client } = session(argv);
        const b = await client.billing();
        if (argv.output === 'json') return json(b);
        write(
          fields([
            ['balance', rupees(b.wallet.balance)],
            ['monthly run-rate', rupees(b.monthly_run_rate.amount)],
            ['unpaid', `${rupees(b.unpaid_total.amount)} (${b.unpaid_orders.length} orders)`],
          ]),
        );
        const unpaid = b.billing.unpaid.orders;
        if (unpaid.length > 0) {
          write('');
          write(
            table(
              ['UNPAID ORDER', 'INSTANCE', 'AMOUNT', 'RENEWS FROM', 'CREATED'],
              unpaid.map((o) => [
                o.public_id,
                `${o.service.id} ${o.service.label}`,
                rupees(o.amount),
                o.renews_from,
                o.created_at,
              ]),
            ),
          );
        }
        const renewals = b.billing.next_renewals;
        if (renewals.length > 0) {
          write('');
          write(
            table(
              ['RENEWS', 'INSTANCE', 'AMOUNT'],
              renewals.map((r) => [r.paid_until, `${r.service.id} ${r.service.label}`, rupees(r.amount)]),
            ),
          );
        }
      },
    );
}
