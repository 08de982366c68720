// search Q [--type T] [--limit N] (CONTRACT §8): staff search across every account; `user:`
// narrows it to accounts (username or e-mail), the other operators as on the API.

import { AppError } from '../../core/errors.ts';
import { parseSearch, typeFilterOf } from '../../core/search/query.ts';
import { MAX_LIMIT } from '../../core/search/search.service.ts';
import { type Command, table } from '../command.ts';

export const searchCommands: Command[] = [
  {
    noun: 'search',
    verb: '',
    summary: 'Search every account: services, IP addresses, orders, wallet transactions, deposits (user: narrows)',
    args: ['QUERY'],
    options: {
      type: { type: 'string', description: 'only this group: service, ip, order, transaction or deposit' },
      limit: { type: 'string', description: `items per group (default 5, at most ${MAX_LIMIT})` },
    },
    async run(deps, { args, options }) {
      const parsed = parseSearch(String(args[0] ?? ''));
      let type = null;
      if (typeof options.type === 'string') {
        const filter = typeFilterOf(options.type);
        if (!filter || !('type' in filter))
          throw AppError.fields({ type: 'must be service, ip, order, transaction or deposit' });
        type = filter.type;
      }
      const limit = typeof options.limit === 'string' ? Number(options.limit) : undefined;
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) {
        throw AppError.fields({ limit: `must be a whole number from 1 to ${MAX_LIMIT}` });
      }
      const groups = await deps.search.search(parsed, { staff: true }, { type, ...(limit ? { limit } : {}) });
      const rows = groups.flatMap((g) =>
        g.items.map((i) => ({ group: g.type, total: g.total, id: i.id, title: i.title })),
      );
      return {
        json: { q: parsed.q, kind: parsed.kind, groups },
        text:
          rows.length === 0
            ? `nothing found for ${JSON.stringify(parsed.q)} (${parsed.kind})`
            : `${parsed.kind}: ${groups.map((g) => `${g.total} ${g.type}`).join(', ')}\n\n${table(rows, ['group', 'id', 'title'])}`,
      };
    },
  },
];
