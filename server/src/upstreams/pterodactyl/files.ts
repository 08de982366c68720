// A server's files through the client API (upstreams.md §1.6): listing, reading (never more
// than asked), writing (raw text/plain body), signed URLs, and the file operations. Uploads go
// to Wings itself: the panel hands out a signed URL, and the file is streamed to it as one
// multipart/form-data part (field `files`), so memory stays bounded whatever the size.

import { randomBytes } from 'node:crypto';
import { UpstreamError } from '../errors.ts';
import type { GameFile, GameServerRef } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toFile } from './mapping.ts';
import { serverPath } from './servers.ts';

type Attrs = Record<string, unknown>;

const files = (ref: GameServerRef) => `${serverPath(ref)}/files`;

export async function listFiles(client: PterodactylClient, ref: GameServerRef, directory: string): Promise<GameFile[]> {
  return (await client.list<Attrs>('client', `${files(ref)}/list`, { directory })).items.map(toFile);
}

/**
 * At most `maxBytes + 1` bytes of the file: reading stops there and the rest is never fetched,
 * so a result longer than `maxBytes` means "the file is larger" (the caller refuses it).
 */
export async function readFile(
  client: PterodactylClient,
  ref: GameServerRef,
  path: string,
  maxBytes: number,
): Promise<Buffer> {
  if (!(Number.isInteger(maxBytes) && maxBytes >= 0)) {
    throw new UpstreamError('rejected', `${client.label}: maxBytes must be a whole number`, { retryable: false });
  }
  const res = await client.raw('client', 'GET', `${files(ref)}/contents`, {
    query: { file: path },
    readLimit: maxBytes + 1,
  });
  return res.bytes;
}

export async function writeFile(
  client: PterodactylClient,
  ref: GameServerRef,
  path: string,
  content: Buffer | string,
): Promise<void> {
  await client.json('client', 'POST', `${files(ref)}/write`, { query: { file: path }, text: content });
}

async function signedUrl(client: PterodactylClient, path: string, query: Record<string, string> = {}): Promise<string> {
  const attrs = await client.item<Attrs>('client', 'GET', path, { query });
  if (typeof attrs.url !== 'string' || !/^https?:\/\//.test(attrs.url)) throw client.garbled('a signed URL');
  return attrs.url;
}

export function uploadUrl(client: PterodactylClient, ref: GameServerRef): Promise<string> {
  return signedUrl(client, `${files(ref)}/upload`);
}

export function downloadUrl(client: PterodactylClient, ref: GameServerRef, path: string): Promise<string> {
  return signedUrl(client, `${files(ref)}/download`, { file: path });
}

/** A filename as a quoted-string of Content-Disposition (Wings reads it with Go's mime parser). */
function quoted(name: string): string {
  return `"${name.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export async function uploadFile(
  client: PterodactylClient,
  ref: GameServerRef,
  directory: string,
  name: string,
  body: NodeJS.ReadableStream,
  size: number | null,
): Promise<void> {
  client.check();
  if (name === '' || /[\r\n\0/]/.test(name)) {
    throw new UpstreamError(
      'rejected',
      `${client.label}: the upload's file name is empty or has a line break, NUL or /`,
      {
        retryable: false,
      },
    );
  }
  if (size !== null && !(Number.isInteger(size) && size >= 0)) {
    throw new UpstreamError('rejected', `${client.label}: the upload's size must be a whole number`, {
      retryable: false,
    });
  }
  let url: URL;
  try {
    url = new URL(await uploadUrl(client, ref));
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    throw client.garbled('a signed upload URL');
  }
  url.searchParams.set('directory', directory);
  const boundary = `----hostplane-${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename=${quoted(name)}\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const mismatch = (sent: number) =>
    new UpstreamError('rejected', `${client.label}: the upload was ${sent} bytes or more, not the ${size} announced`, {
      retryable: false,
    });
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    let sent = 0;
    for await (const chunk of body) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      sent += bytes.length;
      if (size !== null && sent > size) throw mismatch(sent);
      yield bytes;
    }
    if (size !== null && sent !== size) throw mismatch(sent);
    yield tail;
  }
  await client.upload(
    url,
    { 'content-type': `multipart/form-data; boundary=${boundary}` },
    parts(),
    size === null ? null : head.length + size + tail.length,
  );
}

export async function deleteFiles(
  client: PterodactylClient,
  ref: GameServerRef,
  root: string,
  names: string[],
): Promise<void> {
  await client.json('client', 'POST', `${files(ref)}/delete`, { json: { root, files: names } });
}

export async function renameFiles(
  client: PterodactylClient,
  ref: GameServerRef,
  root: string,
  moves: { from: string; to: string }[],
): Promise<void> {
  await client.json('client', 'PUT', `${files(ref)}/rename`, {
    json: { root, files: moves.map(({ from, to }) => ({ from, to })) },
  });
}

export async function copyFile(client: PterodactylClient, ref: GameServerRef, location: string): Promise<void> {
  await client.json('client', 'POST', `${files(ref)}/copy`, { json: { location } });
}

export async function compressFiles(
  client: PterodactylClient,
  ref: GameServerRef,
  root: string,
  names: string[],
): Promise<GameFile> {
  return toFile(await client.item<Attrs>('client', 'POST', `${files(ref)}/compress`, { json: { root, files: names } }));
}

export async function decompressFile(
  client: PterodactylClient,
  ref: GameServerRef,
  root: string,
  name: string,
): Promise<void> {
  await client.json('client', 'POST', `${files(ref)}/decompress`, { json: { root, file: name } });
}

export async function createFolder(
  client: PterodactylClient,
  ref: GameServerRef,
  root: string,
  name: string,
): Promise<void> {
  await client.json('client', 'POST', `${files(ref)}/create-folder`, { json: { root, name } });
}
