// What changes a machine: PATCH of the ComputerSystem (boot override, AssetTag, the install
// parameters), `#ComputerSystem.Reset`, the virtual media actions (InsertMedia as a task,
// EjectMedia) and PATCH of a VirtualMedia slot (what older BMCs take instead of the actions),
// and `#Drive.SecureErase` (a task, only while the system is off). Bodies are checked as a BMC
// does: unknown properties, read-only ones, values outside the allowable lists, wrong types
// are 400s with one ExtendedInfo message per problem, RelatedProperties naming the property.

import type { Ctx, Runtime, Task } from './context.ts';
import { isObject, type Message, message, RedfishError } from './http.ts';
import { parseInstall } from './install.ts';
import { reset } from './power.ts';
import { paths } from './resources.ts';
import {
  BOOT_ENABLED,
  BOOT_TARGETS,
  type BootEnabled,
  type BootTarget,
  type DriveState,
  logAction,
  type MediaSlot,
  type ResetType,
} from './state.ts';
import { startTask } from './tasks.ts';

/** Properties of the system that exist but cannot be written. */
const READ_ONLY = new Set([
  'Id',
  'Name',
  'PowerState',
  'Status',
  'SerialNumber',
  'Manufacturer',
  'Model',
  'UUID',
  'ProcessorSummary',
  'MemorySummary',
  'Actions',
  'Links',
  'EthernetInterfaces',
  'Storage',
  'SystemType',
  'BiosVersion',
  'HostName',
]);

const show = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));

function fail(problems: Message[]): void {
  if (problems.length > 0) throw new RedfishError(400, problems);
}

/** PATCH /Systems/<id>: every change is checked before any is applied. */
export function patchSystem(rt: Runtime, body: unknown): void {
  const m = rt.machine;
  if (!isObject(body)) throw new RedfishError(400, message('MalformedJSON'));
  const problems: Message[] = [];
  let enabled: BootEnabled | undefined;
  let target: BootTarget | undefined;
  let assetTag: string | undefined;
  let install: ReturnType<typeof parseInstall> | undefined;
  for (const [key, value] of Object.entries(body)) {
    if (key === '@odata.etag') continue;
    if (key === 'Boot') {
      if (!isObject(value)) {
        problems.push(message('PropertyValueTypeError', [show(value), 'Boot'], ['#/Boot']));
        continue;
      }
      for (const [bootKey, bootValue] of Object.entries(value)) {
        const pointer = `#/Boot/${bootKey}`;
        if (bootKey === 'BootSourceOverrideEnabled') {
          if (BOOT_ENABLED.includes(bootValue as BootEnabled)) enabled = bootValue as BootEnabled;
          else problems.push(message('PropertyValueNotInList', [show(bootValue), bootKey], [pointer]));
        } else if (bootKey === 'BootSourceOverrideTarget') {
          if ((BOOT_TARGETS as readonly string[]).includes(bootValue as string)) target = bootValue as BootTarget;
          else problems.push(message('PropertyValueNotInList', [show(bootValue), bootKey], [pointer]));
        } else if (bootKey === 'BootSourceOverrideMode') {
          if (bootValue !== 'UEFI' && bootValue !== 'Legacy') {
            problems.push(message('PropertyValueNotInList', [show(bootValue), bootKey], [pointer]));
          }
        } else {
          problems.push(message('PropertyUnknown', [bootKey], [pointer]));
        }
      }
    } else if (key === 'AssetTag') {
      if (typeof value === 'string') assetTag = value;
      else problems.push(message('PropertyValueTypeError', [show(value), key], ['#/AssetTag']));
    } else if (key === 'Oem') {
      if (!isObject(value) || !isObject(value.Hostplane)) {
        problems.push(message('PropertyUnknown', ['Oem'], ['#/Oem']));
        continue;
      }
      for (const [oemKey, oemValue] of Object.entries(value.Hostplane)) {
        if (oemKey !== 'Install') {
          const pointer = `#/Oem/Hostplane/${oemKey}`;
          problems.push(
            READ_ONLY_OEM.has(oemKey)
              ? message('PropertyNotWritable', [oemKey], [pointer])
              : message('PropertyUnknown', [oemKey], [pointer]),
          );
          continue;
        }
        try {
          install = parseInstall(oemValue);
        } catch (error) {
          if (error instanceof RedfishError) problems.push(...error.messages);
          else throw error;
        }
      }
    } else if (READ_ONLY.has(key)) {
      problems.push(message('PropertyNotWritable', [key], [`#/${key}`]));
    } else {
      problems.push(message('PropertyUnknown', [key], [`#/${key}`]));
    }
  }
  fail(problems);
  if (enabled !== undefined) m.boot.enabled = enabled;
  if (target !== undefined) m.boot.target = target;
  if (assetTag !== undefined) m.assetTag = assetTag;
  if (install !== undefined) m.installParams = install;
  m.revision++;
  logAction(m, `PATCH ComputerSystem ${Object.keys(body).join(',')}`);
}

const READ_ONLY_OEM = new Set(['InstallState', 'InstallMessage', 'InstalledImage']);

export function resetAction(ctx: Ctx, rt: Runtime, body: unknown): void {
  const action = 'ComputerSystem.Reset';
  const params = isObject(body) ? body : {};
  for (const key of Object.keys(params)) {
    if (key !== 'ResetType')
      throw new RedfishError(400, message('ActionParameterUnknown', [action, key], [`#/${key}`]));
  }
  const type = params.ResetType;
  if (type === undefined) {
    throw new RedfishError(400, message('ActionParameterMissing', [action, 'ResetType'], ['#/ResetType']));
  }
  if (!(ctx.settings.resetTypes as readonly unknown[]).includes(type)) {
    throw new RedfishError(400, message('PropertyValueNotInList', [show(type), 'ResetType'], ['#/ResetType']));
  }
  reset(ctx, rt, type as ResetType);
}

const PROTOCOLS = ['HTTP', 'HTTPS', 'NFS', 'CIFS'];
const INSERT_PARAMS = new Set([
  'Image',
  'Inserted',
  'WriteProtected',
  'TransferProtocolType',
  'TransferMethod',
  'UserName',
  'Password',
]);

/** Check an image URI (http, https, nfs, cifs); a 400 naming the property when it is not one. */
function checkImage(image: unknown, pointer: string, problems: Message[]): string | null {
  if (typeof image !== 'string') {
    problems.push(message('PropertyValueTypeError', [show(image), 'Image'], [pointer]));
    return null;
  }
  try {
    const url = new URL(image);
    if (!PROTOCOLS.includes(url.protocol.replace(':', '').toUpperCase()) || url.pathname.length < 2) throw new Error();
    return image;
  } catch {
    problems.push(message('PropertyValueFormatError', [image, 'Image'], [pointer]));
    return null;
  }
}

/** `#VirtualMedia.InsertMedia`: a task that mounts the image; 409 when the slot already holds one. */
export function insertMedia(ctx: Ctx, rt: Runtime, slot: MediaSlot, body: unknown): Task {
  const action = 'VirtualMedia.InsertMedia';
  const params = isObject(body) ? body : {};
  const problems: Message[] = [];
  for (const key of Object.keys(params)) {
    if (!INSERT_PARAMS.has(key)) problems.push(message('ActionParameterUnknown', [action, key], [`#/${key}`]));
  }
  if (params.Image === undefined) problems.push(message('ActionParameterMissing', [action, 'Image'], ['#/Image']));
  const image = params.Image === undefined ? null : checkImage(params.Image, '#/Image', problems);
  for (const key of ['Inserted', 'WriteProtected']) {
    if (params[key] !== undefined && typeof params[key] !== 'boolean') {
      problems.push(message('PropertyValueTypeError', [show(params[key]), key], [`#/${key}`]));
    }
  }
  const protocol = params.TransferProtocolType;
  if (protocol !== undefined && !PROTOCOLS.includes(String(protocol))) {
    problems.push(
      message('PropertyValueNotInList', [show(protocol), 'TransferProtocolType'], ['#/TransferProtocolType']),
    );
  }
  fail(problems);
  if (slot.inserted || rt.busySlots.has(slot.id)) {
    throw new RedfishError(
      409,
      message('ResourceInUse', [], [], 'Virtual media is already inserted in this slot; eject it first.'),
    );
  }
  const m = rt.machine;
  logAction(m, `VirtualMedia.InsertMedia ${slot.id} ${image}`);
  rt.busySlots.add(slot.id);
  return startTask(ctx, rt, {
    name: `Insert virtual media ${slot.id}`,
    targetUri: paths.insert(m, slot),
    work: () => {
      slot.image = image;
      slot.inserted = params.Inserted !== false;
      slot.writeProtected = params.WriteProtected !== false;
    },
    settle: () => rt.busySlots.delete(slot.id),
  });
}

/** `#VirtualMedia.EjectMedia`: at once; 409 when nothing is inserted. */
export function ejectMedia(rt: Runtime, slot: MediaSlot, body: unknown): void {
  if (isObject(body) && Object.keys(body).length > 0) {
    const key = Object.keys(body)[0] ?? '';
    throw new RedfishError(400, message('ActionParameterUnknown', ['VirtualMedia.EjectMedia', key], [`#/${key}`]));
  }
  if (!slot.inserted) {
    throw new RedfishError(409, message('GeneralError', [], [], 'No virtual media is inserted in this slot.'));
  }
  Object.assign(slot, { image: null, inserted: false, writeProtected: true });
  logAction(rt.machine, `VirtualMedia.EjectMedia ${slot.id}`);
}

/** PATCH of a VirtualMedia slot: `{Image, Inserted, WriteProtected}` (null Image or Inserted false ejects). */
export function patchMedia(rt: Runtime, slot: MediaSlot, body: unknown): void {
  if (!isObject(body)) throw new RedfishError(400, message('MalformedJSON'));
  const problems: Message[] = [];
  for (const key of Object.keys(body)) {
    if (!['Image', 'Inserted', 'WriteProtected'].includes(key)) {
      problems.push(
        message(
          ['Id', 'Name', 'MediaTypes', 'ConnectedVia', 'ImageName'].includes(key)
            ? 'PropertyNotWritable'
            : 'PropertyUnknown',
          [key],
          [`#/${key}`],
        ),
      );
    }
  }
  const image =
    body.Image === null || body.Image === undefined ? body.Image : checkImage(body.Image, '#/Image', problems);
  for (const key of ['Inserted', 'WriteProtected']) {
    if (body[key] !== undefined && typeof body[key] !== 'boolean') {
      problems.push(message('PropertyValueTypeError', [show(body[key]), key], [`#/${key}`]));
    }
  }
  fail(problems);
  if (image === null || body.Inserted === false) {
    Object.assign(slot, { image: null, inserted: false, writeProtected: true });
  } else if (typeof image === 'string') {
    if (rt.busySlots.has(slot.id)) throw new RedfishError(409, message('ResourceInUse'));
    Object.assign(slot, { image, inserted: true, writeProtected: body.WriteProtected !== false });
  }
  if (typeof body.WriteProtected === 'boolean') slot.writeProtected = body.WriteProtected;
  logAction(rt.machine, `PATCH VirtualMedia ${slot.id}`);
}

/** `#Drive.SecureErase`: a task; 409 while the system is not off or the drive is already being erased. */
export function secureErase(ctx: Ctx, rt: Runtime, drive: DriveState, body: unknown): Task {
  const m = rt.machine;
  const erasing = rt.erasing;
  if (isObject(body) && Object.keys(body).length > 0) {
    const key = Object.keys(body)[0] ?? '';
    throw new RedfishError(400, message('ActionParameterUnknown', ['Drive.SecureErase', key], [`#/${key}`]));
  }
  if (m.power !== 'Off') {
    throw new RedfishError(
      409,
      message('ResourceInUse', [], [], 'The drive cannot be erased while the system is powered on.'),
    );
  }
  if (erasing.has(drive.id)) throw new RedfishError(409, message('ResourceInUse'));
  erasing.add(drive.id);
  logAction(m, `Drive.SecureErase ${drive.id}`);
  return startTask(ctx, rt, {
    name: `Secure erase ${drive.id}`,
    targetUri: paths.erase(m, drive),
    work: () => {
      if (m.power !== 'Off') throw new Error('The system was powered on during the erase.');
      drive.os = null;
      drive.erasures++;
      // Nothing left on any drive: the machine is back to stock.
      if (m.drives.every((d) => d.os === null) && m.installState !== 'installing') {
        m.installState = 'idle';
        m.installMessage = null;
        m.installImage = null;
      }
      m.revision++;
    },
    settle: () => erasing.delete(drive.id),
  });
}
