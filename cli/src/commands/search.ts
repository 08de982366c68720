// search QUERY…: the spec's search (GET /api/v1/search/?q=, scope read; CONTRACT §8) over your
// services, IPs, orders, wallet transactions and deposits. Operators type: status: loc: node:
// combine with AND (repeated ones OR); 30 searches per 10 s per token.

import type { Argv } from 'yargs';
import { UsageError } from '../errors.ts';
import { json, msg, note, table, write } from '../output.ts';
import { type GlobalArgs, session } from '../session.ts';

const GROUPS = ['service', 'ip', 'order', 'transaction', 'deposit'] as const;

export function searchCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(
    'search <query..>',
    'Search your services, IPs, orders, transactions and deposits (operators type: status: loc: node:)',
    (c) =>
      c
        .positional('query', { type: 'string', array: true, demandOption: true, describe: 'words and operators' })
        .option('type', { choices: GROUPS, describe: 'only this group' })
        .option('limit', { type: 'number', describe: 'items per group (default 5, at most 50)' })
        .example('$0 search 203.0.113.7', 'an address, a prefix or a CIDR')
        .example('$0 search status:active type:game', ''),
    async (argv) => {
      const q = (argv.query as (string | number)[]).map(String).join(' ').trim();
      if (q === '') throw new UsageError('search needs a query');
      if (argv.limit !== undefined && (!Number.isInteger(argv.limit) || argv.limit < 1 || argv.limit > 50)) {
        throw new UsageError('--limit takes a whole number from 1 to 50');
      }
      const { client } = session(argv);
      const answer = await client.search(q, {
        ...(argv.type ? { type: argv.type } : {}),
        ...(argv.limit !== undefined ? { limit: argv.limit } : {}),
      });
      // The token surface's answer without its envelope flag: {q, kind, took_ms, groups}.
      const result = { q: answer.q, kind: answer.kind, took_ms: answer.took_ms, groups: answer.groups };
      if (argv.output === 'json') return json(result);
      const rows = result.groups.flatMap((g) => g.items.map((i) => [g.type, i.id, i.title, i.url]));
      // How the server read the query: a kind of text, or only operators (type:, status:, …).
      const readAs = result.kind === 'empty' ? 'filters only' : `${result.kind} query`;
      if (rows.length === 0) return note(msg`Nothing matches ${q} (${readAs}).`);
      write(table(['TYPE', 'ID', 'TITLE', 'URL'], rows));
      const more = result.groups.filter((g) => g.total > g.items.length);
      const shown = more.map((g) => msg`${g.items.length} of ${g.total} ${g.label}`.text).join(', ');
      note(msg`${readAs}, ${result.took_ms} ms${more.length > 0 ? msg`; showing ${shown} (--limit for more)` : ''}.`);
    },
  );
}
