// The machine as the platform uses it: what it is (ComputerSystem and its EthernetInterfaces),
// starting an install (virtual CD, install parameters, one-time boot override to Cd, power
// cycle), reading the install's progress, and wiping it back to stock (ForceOff, eject, boot
// override off, install parameters cleared, `#Drive.SecureErase` on every drive, each a task).

import type { InstallSpec, MachineInfo } from '../bare-metal.ts';
import { UpstreamError } from '../errors.ts';
import { isObject, type Json, type RedfishClient } from './client.ts';
import { drives, type Found, members, system } from './discovery.ts';
import { clearInstallParameters, type InstallProgress, passInstallParameters, readInstallState } from './install.ts';
import { ejectAll, insertImage } from './media.ts';
import { powerOf, reset } from './power.ts';
import { act, actionTarget, settle } from './tasks.ts';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** `AA-BB-CC-DD-EE-FF` / `aabb.ccdd.eeff` / `AA:BB:…` → `aa:bb:cc:dd:ee:ff`; null when it is not a MAC. */
export function normaliseMac(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const hex = value.toLowerCase().replace(/[^0-9a-f]/g, '');
  if (hex.length !== 12 || hex === '000000000000') return null;
  return hex.match(/../g)?.join(':') ?? null;
}

export async function machineInfo(client: RedfishClient): Promise<MachineInfo> {
  const { body } = await system(client);
  const status = isObject(body.Status) ? body.Status : {};
  const processors = isObject(body.ProcessorSummary) ? body.ProcessorSummary : {};
  const memory = isObject(body.MemorySummary) ? body.MemorySummary : {};
  const macs: string[] = [];
  const nics = isObject(body.EthernetInterfaces) ? body.EthernetInterfaces['@odata.id'] : undefined;
  if (typeof nics === 'string') {
    for (const uri of await members(client, nics, 'network interfaces')) {
      const nic = await client.get(uri, 'a network interface');
      const mac = normaliseMac(nic.MACAddress) ?? normaliseMac(nic.PermanentMACAddress);
      if (mac && !macs.includes(mac)) macs.push(mac);
    }
  }
  return {
    id: text(body.Id),
    manufacturer: text(body.Manufacturer),
    model: text(body.Model),
    serialNumber: text(body.SerialNumber),
    power: powerOf(client, body),
    health: text(status.Health) || text(status.HealthRollup) || 'Unknown',
    cpus: count(processors.Count),
    memoryGiB: count(memory.TotalSystemMemoryGiB),
    macs,
  };
}

/** Boot the virtual CD once at the next boot (left alone when already set so). */
async function bootOnceFromCd(client: RedfishClient, sys: Found): Promise<void> {
  const boot = isObject(sys.body.Boot) ? sys.body.Boot : {};
  const allowed = boot['BootSourceOverrideTarget@Redfish.AllowableValues'];
  if (Array.isArray(allowed) && !allowed.includes('Cd')) {
    throw new UpstreamError('rejected', `${client.label}: the system cannot boot its virtual CD (no Cd boot target)`, {
      retryable: false,
      reason: 'not_supported',
    });
  }
  if (boot.BootSourceOverrideEnabled === 'Once' && boot.BootSourceOverrideTarget === 'Cd') return;
  const what = 'setting a one-time boot from the virtual CD';
  const body = { Boot: { BootSourceOverrideEnabled: 'Once', BootSourceOverrideTarget: 'Cd' } };
  await settle(client, await client.patch(sys.uri, body, what), what);
}

async function clearBootOverride(client: RedfishClient, sys: Found): Promise<void> {
  const boot = isObject(sys.body.Boot) ? sys.body.Boot : {};
  if (boot.BootSourceOverrideEnabled === undefined || boot.BootSourceOverrideEnabled === 'Disabled') return;
  const what = 'clearing the boot override';
  await settle(client, await client.patch(sys.uri, { Boot: { BootSourceOverrideEnabled: 'Disabled' } }, what), what);
}

export async function startInstall(client: RedfishClient, spec: InstallSpec): Promise<void> {
  let sys = await system(client);
  await insertImage(client, sys.body, spec.imageUrl);
  await passInstallParameters(client, sys, spec);
  sys = await system(client);
  await bootOnceFromCd(client, sys);
  // A machine that is off is powered on; one that is on is power-cycled into the installer.
  await reset(client, 'PowerCycle');
}

/**
 * The install is done: the virtual CD ejected, the boot override and the install parameters
 * (hostname, keys, the password's hash) removed from the BMC, and the machine on, running what
 * was installed.
 */
export async function finishInstall(client: RedfishClient): Promise<void> {
  let sys = await system(client);
  await ejectAll(client, sys.body);
  await clearBootOverride(client, sys);
  sys = await system(client);
  await clearInstallParameters(client, sys);
  await reset(client, 'On');
}

export async function installState(client: RedfishClient): Promise<InstallProgress> {
  return readInstallState(client, (await system(client)).body);
}

/** Securely erase every drive that offers it; `rejected` (not_supported) when none does. */
async function eraseDrives(client: RedfishClient, sys: Json): Promise<void> {
  const found = await drives(client, sys);
  const erasable = found
    .map((d) => ({ drive: d, target: actionTarget(d.body, '#Drive.SecureErase') }))
    .filter((d): d is { drive: Found; target: string } => d.target !== null);
  if (erasable.length === 0) {
    throw new UpstreamError(
      'rejected',
      `${client.label}: no drive offers #Drive.SecureErase (${found.length} drives found); wipe it by hand`,
      { retryable: false, reason: 'not_supported' },
    );
  }
  for (const { drive, target } of erasable) {
    await act(client, target, {}, `secure erase of ${text(drive.body.Name) || client.uri(drive.uri).pathname}`);
  }
}

export async function wipe(client: RedfishClient): Promise<void> {
  await reset(client, 'ForceOff');
  let sys = await system(client);
  await ejectAll(client, sys.body);
  await clearBootOverride(client, sys);
  sys = await system(client);
  await clearInstallParameters(client, sys);
  await eraseDrives(client, sys.body);
}
