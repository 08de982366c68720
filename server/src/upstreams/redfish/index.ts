// The Redfish driver behind the BareMetal interface (contract in ../bare-metal.ts): one
// physical machine reached through its BMC's DMTF Redfish API (iDRAC, iLO, Supermicro,
// OpenBMC) with one BMC account. Sessions and requests are ./client.ts, link-following
// ./discovery.ts, task monitors ./tasks.ts, power ./power.ts, virtual media ./media.ts, the
// install and wipe ./machine.ts; how install parameters reach the image is ./install.ts (the
// one non-standard part, swappable for a seed image). Bare metal has no console here.

import type { BareMetal } from '../bare-metal.ts';
import type { DriverTiming, NodeAccess } from '../driver.ts';
import { UpstreamError } from '../errors.ts';
import { RedfishClient } from './client.ts';
import { parseRedfishNode as parseNode, type RedfishConfig } from './config.ts';
import { manager, system } from './discovery.ts';
import { finishInstall, installState, machineInfo, startInstall, wipe } from './machine.ts';
import { power, reset, shutdown } from './power.ts';

export type { RedfishConfig } from './config.ts';
export { sha512Crypt } from './crypt.ts';
export { hostplaneSeed } from './install.ts';

/** A node row (endpoint = the BMC's base URL; credentials {username, password}; settings {tls_insecure?, tls_ca?, system?}) as a configuration. */
export function parseRedfishNode(node: NodeAccess, timing: DriverTiming): RedfishConfig {
  return parseNode(node, timing);
}

/** The BMC answers, accepts the account and shows the machine: `<firmware> (Redfish <version>)`. */
async function ping(client: RedfishClient): Promise<{ version: string }> {
  const root = await client.root();
  const sys = await system(client);
  const mgr = await manager(client, sys.body);
  const firmware = typeof mgr.body.FirmwareVersion === 'string' ? mgr.body.FirmwareVersion : 'unknown firmware';
  const model = typeof mgr.body.Model === 'string' && mgr.body.Model !== '' ? `${mgr.body.Model} ` : '';
  return { version: `${model}${firmware} (Redfish ${String(root.RedfishVersion)})` };
}

export function createRedfishMachine(config: RedfishConfig): BareMetal {
  const client = new RedfishClient(config);
  /** Every call: the configuration's problem first, then only UpstreamError, without password or token. */
  const call =
    <A extends unknown[], R>(run: (c: RedfishClient, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      client.guard(() => run(client, ...args));

  return {
    ping: call(ping),
    openConsole() {
      throw new UpstreamError('rejected', `${client.label}: bare-metal machines have no console here`, {
        retryable: false,
        reason: 'not_supported',
      });
    },
    consoleInput: () => null,
    close: () => client.close(),

    machine: call(machineInfo),
    startInstall: (spec) =>
      // The root password never appears in an error, whatever the BMC echoes.
      client.guard(() => startInstall(client, spec), [spec.password]),
    installState: call(installState),
    finishInstall: call(finishInstall),
    reset: call((c, action: Parameters<BareMetal['reset']>[0]) => reset(c, action)),
    shutdown: call(shutdown),
    wipe: call(wipe),
    power: call(power),
  };
}
