// Cloud-init user data for Proxmox VE: a snippet file the VM's `cicustom: user=<storage>:snippets/<file>`
// names. PVE's API cannot upload snippets (POST /nodes/{node}/storage/{storage}/upload takes iso,
// vztmpl and import only), so a real installation gives the node a storage with the `snippets`
// content type on a directory Hostplane can write too (NFS/CephFS shared between the nodes and
// the Hostplane host, e.g. `pvesm add dir hostplane-ci --path /mnt/pve/hostplane-ci --content
// snippets --shared 1`, mounted on the Hostplane host): the node settings `snippets_storage`
// (the PVE storage id) and `snippets_dir` (that storage's directory as mounted here; files go
// into its `snippets/` subdirectory, as PVE keeps them). A node without them refuses user data.
//
// With `cicustom: user=`, PVE no longer generates the user-data part of the cloud-init drive
// (hostname, login, password, SSH keys come from it), so the snippet carries them itself, as
// PVE would have written them (the password as a SHA-512 crypt hash, never in the clear), in
// the first part of a MIME multipart document; the customer's data is the second part, typed by
// cloud-init from its first line (#cloud-config, #!, #include, …); a key both set is theirs.

import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UpstreamError } from '../errors.ts';
import type { CloudInit } from '../hypervisor.ts';

export interface SnippetStorage {
  /** The PVE storage id holding snippets (content type `snippets`). */
  storage: string;
  /** That storage's directory as this host sees it (a shared mount): snippets go in `<dir>/snippets/`. */
  dir: string;
}

const CRYPT64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Bytes of `source` repeated to `length`. */
function stretched(source: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = source[i % source.length] as number;
  return out;
}

const sha512 = (...parts: Buffer[]) => {
  const h = createHash('sha512');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** glibc's SHA-512 crypt (`$6$`, 5000 rounds), what /etc/shadow and cloud-init's hashed passwords take. */
export function sha512Crypt(password: string, salt = randomBytes(12).toString('base64').replace(/[+=]/g, '.')): string {
  const p = Buffer.from(password, 'utf8');
  const s = Buffer.from(salt.slice(0, 16), 'utf8');
  const b = sha512(p, s, p);
  const a = createHash('sha512').update(p).update(s).update(stretched(b, p.length));
  for (let n = p.length; n > 0; n >>= 1) a.update(n & 1 ? b : p);
  let c = a.digest();
  const dp = sha512(...Array.from({ length: p.length }, () => p));
  const pSeq = stretched(dp, p.length);
  const ds = sha512(...Array.from({ length: 16 + (c[0] as number) }, () => s));
  const sSeq = stretched(ds, s.length);
  for (let i = 0; i < 5000; i++) {
    const h = createHash('sha512');
    h.update(i & 1 ? pSeq : c);
    if (i % 3) h.update(sSeq);
    if (i % 7) h.update(pSeq);
    h.update(i & 1 ? c : pSeq);
    c = h.digest();
  }
  let out = '';
  const put = (b2: number, b1: number, b0: number, n: number) => {
    let w = (b2 << 16) | (b1 << 8) | b0;
    for (let i = 0; i < n; i++, w >>= 6) out += CRYPT64[w & 0x3f];
  };
  for (let i = 0; i < 21; i++) {
    const x = [i, i + 21, i + 42].map((k) => c[k] as number);
    // glibc rotates which of the three bytes leads: (0,21,42), (22,43,1), (44,2,23), …
    const lead = i % 3;
    const order = lead === 0 ? [x[0], x[1], x[2]] : lead === 1 ? [x[1], x[2], x[0]] : [x[2], x[0], x[1]];
    put(order[0] as number, order[1] as number, order[2] as number, 4);
  }
  put(0, 0, c[63] as number, 2);
  return `$6$${s.toString('utf8')}$${out}`;
}

/** The snippet's file name for a VM: its platform name, so a retried job writes the same file. */
export const snippetFile = (vmName: string): string => `${vmName}-user.yaml`;

/** The `cicustom` value naming a VM's snippet. */
export const cicustomOf = (storage: SnippetStorage, vmName: string): string =>
  `user=${storage.storage}:snippets/${snippetFile(vmName)}`;

/** The platform's own cloud-config (what PVE generates when there is no cicustom), as YAML. */
function platformConfig(ci: CloudInit, passwordHash: string): string {
  const q = (v: string) => JSON.stringify(v); // a JSON string is a YAML double-quoted scalar
  const dot = ci.hostname.indexOf('.');
  const lines = [
    '#cloud-config',
    `hostname: ${q(dot > 0 ? ci.hostname.slice(0, dot) : ci.hostname)}`,
    'manage_etc_hosts: true',
    ...(dot > 0 ? [`fqdn: ${q(ci.hostname)}`] : []),
    `user: ${q(ci.user)}`,
    `password: ${q(passwordHash)}`,
    ...(ci.sshKeys.length > 0 ? ['ssh_authorized_keys:', ...ci.sshKeys.map((k) => `  - ${q(k.trim())}`)] : []),
    'chpasswd:',
    '  expire: false',
    'users:',
    '  - default',
  ];
  return `${lines.join('\n')}\n`;
}

/** The snippet: a MIME multipart user-data, the platform's settings first and the customer's data after. */
export function snippetContent(ci: CloudInit & { userData: string }, passwordHash = sha512Crypt(ci.password)): string {
  const boundary = `==hostplane-${randomBytes(12).toString('hex')}==`;
  const part = (type: string, name: string, body: string) =>
    [
      `--${boundary}`,
      `Content-Type: ${type}; charset="utf-8"`,
      'MIME-Version: 1.0',
      'Content-Transfer-Encoding: 8bit',
      `Content-Disposition: attachment; filename="${name}"`,
      '',
      body.endsWith('\n') ? body : `${body}\n`,
    ].join('\n');
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    'MIME-Version: 1.0',
    '',
    part('text/cloud-config', 'hostplane.cfg', platformConfig(ci, passwordHash)),
    // text/plain: cloud-init types the part by its first line, as it does a whole user-data.
    part('text/plain', 'user-data', ci.userData),
    `--${boundary}--`,
    '',
  ].join('\n');
}

const noStorage = (label: string) =>
  new UpstreamError(
    'rejected',
    `${label}: cloud-init user data needs a snippets storage shared with this host (node settings snippets_storage and snippets_dir)`,
    { retryable: false },
  );

/** Write the VM's snippet (atomically, owner-only): the same path every attempt. */
export async function writeSnippet(
  storage: SnippetStorage | undefined,
  label: string,
  vmName: string,
  ci: CloudInit & { userData: string },
): Promise<string> {
  if (!storage) throw noStorage(label);
  const dir = join(storage.dir, 'snippets');
  const path = join(dir, snippetFile(vmName));
  try {
    await mkdir(dir, { recursive: true });
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(partial, snippetContent(ci), { mode: 0o600 });
    await rename(partial, path);
  } catch (error) {
    // The message names the path, never the content.
    throw new UpstreamError(
      'unreachable',
      `${label}: could not write the cloud-init snippet ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  return cicustomOf(storage, vmName);
}

/** Remove a VM's snippet, if there is one (a VM destroyed or reinstalled without user data). */
export async function removeSnippet(storage: SnippetStorage | undefined, vmName: string): Promise<void> {
  if (!storage) return;
  await rm(join(storage.dir, 'snippets', snippetFile(vmName)), { force: true });
}
