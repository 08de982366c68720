// Virtual media: the OS image mounted as the machine's virtual CD. `#VirtualMedia.InsertMedia`
// `{Image, Inserted: true, WriteProtected: true}` (a task on some BMCs) and
// `#VirtualMedia.EjectMedia`; BMCs without the actions (older iDRAC, some Supermicro) take a
// PATCH of `{Image, Inserted}` instead. Safe to repeat: the same image already inserted is
// left alone, another one is ejected first, and ejecting an empty slot does nothing.

import { UpstreamError } from '../errors.ts';
import type { Json, RedfishClient } from './client.ts';
import { cdSlot, type Found, mediaSlots } from './discovery.ts';
import { act, actionTarget, settle } from './tasks.ts';

const holds = (slot: Json, image: string): boolean => slot.Inserted === true && slot.Image === image;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eject(client: RedfishClient, slot: Found): Promise<void> {
  if (
    slot.body.Inserted !== true &&
    (slot.body.Image === null || slot.body.Image === undefined || slot.body.Image === '')
  ) {
    return;
  }
  const what = `ejecting the virtual media at ${client.uri(slot.uri).pathname}`;
  const target = actionTarget(slot.body, '#VirtualMedia.EjectMedia');
  try {
    if (target) await act(client, target, {}, what);
    else await settle(client, await client.patch(slot.uri, { Image: null, Inserted: false }, what), what);
  } catch (error) {
    // Ejected meanwhile (a lost answer, another client): what we wanted.
    const now = await client.get(slot.uri, 'a virtual media slot');
    if (now.Inserted === true) throw error;
  }
}

/** Mount `image` on the virtual CD (ejecting another image first); resolves once the BMC shows it inserted. */
export async function insertImage(client: RedfishClient, sys: Json, image: string): Promise<void> {
  let slot = await cdSlot(client, sys);
  if (holds(slot.body, image)) return;
  if (slot.body.Inserted === true) {
    await eject(client, slot);
    slot = { uri: slot.uri, body: await client.get(slot.uri, 'the virtual CD') };
  }
  const what = `inserting ${image} as virtual media`;
  const target = actionTarget(slot.body, '#VirtualMedia.InsertMedia');
  try {
    if (target) await act(client, target, { Image: image, Inserted: true, WriteProtected: true }, what);
    else {
      const body = { Image: image, Inserted: true, WriteProtected: true };
      await settle(client, await client.patch(slot.uri, body, what), what);
    }
  } catch (error) {
    // An insert already under way (our own, whose answer was lost) is refused as a conflict:
    // wait for the slot to show the image.
    if (!(error instanceof UpstreamError && error.kind === 'conflict')) throw error;
    const deadline = Date.now() + client.config.taskTimeoutMs;
    for (;;) {
      const now = await client.get(slot.uri, 'the virtual CD');
      if (holds(now, image)) return;
      if (now.Inserted === true || Date.now() > deadline) throw error;
      await sleep(client.config.pollIntervalMs);
    }
  }
  const after = await client.get(slot.uri, 'the virtual CD');
  if (!holds(after, image)) {
    throw new UpstreamError('rejected', `${client.label}: ${what}: the BMC does not show the image inserted`, {
      retryable: true,
    });
  }
}

/** Eject whatever is inserted in any virtual media slot. */
export async function ejectAll(client: RedfishClient, sys: Json): Promise<void> {
  for (const slot of await mediaSlots(client, sys)) await eject(client, slot);
}
