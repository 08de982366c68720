// How the install parameters reach the installer, and how its progress is read back. This is
// the one part that is not standard Redfish, kept here so a real deployment can swap it:
//
// - Real images take their answers from a kickstart / preseed / autoinstall file or a
//   cloud-init NoCloud seed image (a second small ISO, or a URL on the kernel command line),
//   which the BMC never sees. A real deployment builds that seed per machine, serves it over
//   http(s), and mounts it as a second virtual medium (or bakes it into the image URL).
// - The emulator (emulators/src/redfish/) stands in for the seed with an OEM property PATCHed
//   onto the system before it boots: `Oem.Hostplane.Install {Hostname, SshKeys, PasswordHash,
//   IPv4}` (`hostplaneSeed` below), and reports progress as `Oem.Hostplane.InstallState`
//   (idle / installing / done / failed). On real hardware progress is out of band: the
//   installer calls home when it finishes (a late-command or cloud-init phone_home).
//
// The root password is sent hashed (SHA-512 crypt, what cloud-init's `passwd` and kickstart's
// `rootpw --iscrypted` take), never in clear.

import type { InstallSpec } from '../bare-metal.ts';
import { UpstreamError } from '../errors.ts';
import { isObject, type Json, type RedfishClient } from './client.ts';
import { sha512Crypt } from './crypt.ts';
import type { Found } from './discovery.ts';
import { settle } from './tasks.ts';

export type InstallProgress = 'idle' | 'installing' | 'done' | 'failed';
const PROGRESS: readonly string[] = ['idle', 'installing', 'done', 'failed'];

/** The emulator's seed: the PATCH body carrying the install parameters (the password hashed). */
export function hostplaneSeed(spec: InstallSpec, passwordHash: string = sha512Crypt(spec.password)): Json {
  return {
    Oem: {
      Hostplane: {
        Install: {
          Hostname: spec.hostname,
          SshKeys: spec.sshKeys,
          PasswordHash: passwordHash,
          IPv4: spec.ipv4
            ? { Address: spec.ipv4.address, PrefixLength: spec.ipv4.prefix, Gateway: spec.ipv4.gateway }
            : null,
        },
      },
    },
  };
}

/** Hand the install parameters to the machine the way its image takes them (here: the emulator's seed). */
export async function passInstallParameters(client: RedfishClient, sys: Found, spec: InstallSpec): Promise<void> {
  const res = await client.patch(sys.uri, hostplaneSeed(spec), 'setting the install parameters');
  await settle(client, res, 'setting the install parameters');
}

function hostplaneOem(sys: Json): Json | null {
  const oem = isObject(sys.Oem) ? sys.Oem : null;
  return oem && isObject(oem.Hostplane) ? oem.Hostplane : null;
}

/** Remove the install parameters left on the BMC (hostname, keys, hash), where there are any. */
export async function clearInstallParameters(client: RedfishClient, sys: Found): Promise<void> {
  const oem = hostplaneOem(sys.body);
  if (!oem || oem.Install === null || oem.Install === undefined) return;
  const body = { Oem: { Hostplane: { Install: null } } };
  const res = await client.patch(sys.uri, body, 'clearing the install parameters');
  await settle(client, res, 'clearing the install parameters');
}

/** Where the install is, as the machine reports it (`Oem.Hostplane.InstallState`). */
export function readInstallState(client: RedfishClient, sys: Json): InstallProgress {
  const state = hostplaneOem(sys)?.InstallState;
  if (typeof state === 'string' && PROGRESS.includes(state)) return state as InstallProgress;
  throw new UpstreamError(
    'protocol',
    `${client.label}: the system reports no install progress (Oem.Hostplane.InstallState); on real hardware the installer has to call home`,
    { retryable: false },
  );
}
