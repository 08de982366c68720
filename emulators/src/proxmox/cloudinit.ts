// Cloud-init custom files (upstreams.md §2.4 config; PVE's `cicustom`): a VM config naming
// `user=<storage>:snippets/<file>` (also meta, network, vendor) gets that file as its user-data
// when its cloud-init drive is generated, which PVE does at every start. The node's `local`
// storage is a directory (`storageDir`, /var/lib/vz on a real node) with snippets in its
// `snippets/` subdirectory, written there by whoever shares it with the node: PVE's API cannot
// upload snippets. A start whose snippet is missing fails as on PVE. What the drive was last
// generated with is kept on the VM (`cloudinit`), for tests and /__emulator/state to read.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { verify } from './params.ts';
import type { Vm } from './state.ts';
import { type ApiContext, PveError } from './tasks.ts';
import { STORAGES } from './vms.ts';

/** The only storage with the `snippets` content type here (a directory storage). */
export const SNIPPET_STORAGE = 'local';

/** A snippet's file, or the error PVE gives for the volume. */
function snippetPath(ctx: ApiContext, volid: string): string {
  const [storage = '', path = ''] = volid.split(/:(.*)/s);
  if (!STORAGES.includes(storage)) throw new Error(`storage '${storage}' does not exist`);
  if (storage !== SNIPPET_STORAGE) throw new Error(`storage '${storage}' does not support content-type 'snippets'`);
  const match = /^snippets\/([^/]+)$/.exec(path);
  if (!match) throw new Error(`unable to parse directory volume name '${path}'`);
  return join(ctx.storageDir, 'snippets', match[1] ?? '');
}

/** Generate the VM's cloud-init drive (at start): read every custom file its config names. */
export function generateCloudInit(ctx: ApiContext, vm: Vm): void {
  const custom = vm.config.cicustom;
  if (!custom) {
    vm.cloudinit = null;
    return;
  }
  const files: Record<string, string> = {};
  for (const part of custom.split(',')) {
    const [type = '', volid = ''] = part.split(/=(.*)/s);
    const path = snippetPath(ctx, volid);
    try {
      files[type] = readFileSync(path, 'utf8');
    } catch {
      throw new Error(`volume '${volid}' does not exist`);
    }
  }
  vm.cloudinit = { ...files, generatedAt: Date.now() };
}

/** GET /nodes/{node}/storage/{storage}/content: the `local` storage lists its snippets. */
export function storageContent(ctx: ApiContext, storage: string, params: Record<string, string>): unknown[] {
  verify(params, { content: () => null, vmid: () => null });
  if (!STORAGES.includes(storage)) throw new PveError(500, `storage '${storage}' does not exist`);
  if (storage !== SNIPPET_STORAGE || (params.content !== undefined && params.content !== 'snippets')) return [];
  const dir = join(ctx.storageDir, 'snippets');
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((name) => !name.endsWith('.tmp'));
  } catch {}
  return names.sort().map((name) => {
    const stat = statSync(join(dir, name));
    return {
      volid: `${storage}:snippets/${name}`,
      content: 'snippets',
      format: 'snippet',
      size: stat.size,
      ctime: Math.floor(stat.ctimeMs / 1000),
    };
  });
}
