// The zones of the emulated server: name → kind, serial and rrsets (name, type, ttl, records),
// kept in memory and, with a state file, written after every change so the demo keeps its records
// across restarts. Names are absolute and lower-case (PowerDNS compares them without case).

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface PdnsRecord {
  content: string;
  disabled: boolean;
}

export interface RRset {
  name: string;
  type: string;
  ttl: number;
  records: PdnsRecord[];
  comments: unknown[];
}

export interface Zone {
  name: string;
  kind: 'Native' | 'Master' | 'Slave';
  serial: number;
  rrsets: RRset[];
}

export class PdnsState {
  zones = new Map<string, Zone>();
  readonly #file: string | null;

  constructor(file: string | null) {
    this.#file = file;
    if (file && existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { zones?: Zone[] };
      for (const zone of saved.zones ?? []) this.zones.set(zone.name, zone);
    }
  }

  /** Create a zone (no-op when it exists) with the SOA and NS records a new zone gets. */
  addZone(name: string, kind: Zone['kind'] = 'Native', nameservers: string[] = ['ns1.hostplane.invalid.']): Zone {
    const key = absolute(name);
    const found = this.zones.get(key);
    if (found) return found;
    const serial = 1;
    const zone: Zone = {
      name: key,
      kind,
      serial,
      rrsets: [
        {
          name: key,
          type: 'SOA',
          ttl: 3600,
          records: [
            {
              content: `${nameservers[0]} hostmaster.hostplane.invalid. ${serial} 10800 3600 604800 3600`,
              disabled: false,
            },
          ],
          comments: [],
        },
        {
          name: key,
          type: 'NS',
          ttl: 3600,
          records: nameservers.map((ns) => ({ content: ns, disabled: false })),
          comments: [],
        },
      ],
    };
    this.zones.set(key, zone);
    this.save();
    return zone;
  }

  removeZone(name: string): boolean {
    const removed = this.zones.delete(absolute(name));
    this.save();
    return removed;
  }

  save(): void {
    if (!this.#file) return;
    const temp = `${this.#file}.tmp`;
    writeFileSync(temp, JSON.stringify({ zones: [...this.zones.values()] }), { mode: 0o600 });
    renameSync(temp, this.#file);
  }
}

/** A name as the zones are keyed: lower-case, with the trailing dot. */
export function absolute(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
}
