// The resources a machine's BMC serves, with the DMTF schemas' shapes (DSP8010): the service
// root, SessionService, ComputerSystem with its EthernetInterfaces and Storage/Drives, Manager
// with its VirtualMedia, TaskService. Every resource has `@odata.id` and `@odata.type`;
// collections are `{Members: [{@odata.id}], Members@odata.count}`. URIs are built from the
// machine's member ids (Dell-like or random), so a client has to follow the links.

import type { Runtime, Session, Settings } from './context.ts';
import { etagOf } from './http.ts';
import type { DriveState, Machine, MediaSlot, Nic } from './state.ts';
import { BOOT_TARGETS } from './state.ts';
import { TASKS, taskResource } from './tasks.ts';

export const ROOT = '/redfish/v1';

/** A path segment as BMCs write ids in URIs: percent-encoded, but `:` kept (Dell's drive ids). */
export function seg(id: string): string {
  return encodeURIComponent(id).replace(/%3A/gi, ':');
}

export const paths = {
  systems: `${ROOT}/Systems`,
  managers: `${ROOT}/Managers`,
  sessionService: `${ROOT}/SessionService`,
  sessions: `${ROOT}/SessionService/Sessions`,
  taskService: `${ROOT}/TaskService`,
  system: (m: Machine) => `${ROOT}/Systems/${seg(m.systemId)}`,
  reset: (m: Machine) => `${paths.system(m)}/Actions/ComputerSystem.Reset`,
  resetInfo: (m: Machine) => `${paths.system(m)}/ResetActionInfo`,
  nics: (m: Machine) => `${paths.system(m)}/EthernetInterfaces`,
  nic: (m: Machine, n: Nic) => `${paths.nics(m)}/${seg(n.id)}`,
  storages: (m: Machine) => `${paths.system(m)}/Storage`,
  storage: (m: Machine) => `${paths.storages(m)}/${seg(m.storageId)}`,
  drive: (m: Machine, d: DriveState) => `${paths.storage(m)}/Drives/${seg(d.id)}`,
  erase: (m: Machine, d: DriveState) => `${paths.drive(m, d)}/Actions/Drive.SecureErase`,
  manager: (m: Machine) => `${ROOT}/Managers/${seg(m.managerId)}`,
  media: (m: Machine) => `${paths.manager(m)}/VirtualMedia`,
  slot: (m: Machine, s: MediaSlot) => `${paths.media(m)}/${seg(s.id)}`,
  insert: (m: Machine, s: MediaSlot) => `${paths.slot(m, s)}/Actions/VirtualMedia.InsertMedia`,
  eject: (m: Machine, s: MediaSlot) => `${paths.slot(m, s)}/Actions/VirtualMedia.EjectMedia`,
  session: (s: Session) => `${ROOT}/SessionService/Sessions/${seg(s.id)}`,
};

const link = (id: string) => ({ '@odata.id': id });

function collection(id: string, type: string, name: string, members: string[]): Record<string, unknown> {
  return {
    '@odata.id': id,
    '@odata.type': `#${type}.${type}`,
    Name: name,
    Members: members.map(link),
    'Members@odata.count': members.length,
  };
}

export function redfishLinks(): Record<string, unknown> {
  return { v1: `${ROOT}/` };
}

export function serviceRoot(rt: Runtime): Record<string, unknown> {
  return {
    '@odata.id': `${ROOT}/`,
    '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
    Id: 'RootService',
    Name: 'Root Service',
    RedfishVersion: '1.17.0',
    UUID: rt.machine.uuid,
    Vendor: 'Hostplane',
    Product: 'Hostplane emulated BMC',
    Systems: link(paths.systems),
    Managers: link(paths.managers),
    SessionService: link(paths.sessionService),
    TaskService: link(paths.taskService),
    Links: { Sessions: link(paths.sessions) },
    ProtocolFeaturesSupported: { ExpandQuery: { ExpandAll: false }, FilterQuery: false, SelectQuery: false },
  };
}

export function sessionService(rt: Runtime, timeoutSeconds: number): Record<string, unknown> {
  return {
    '@odata.id': paths.sessionService,
    '@odata.type': '#SessionService.v1_1_8.SessionService',
    Id: 'SessionService',
    Name: 'Session Service',
    ServiceEnabled: true,
    SessionTimeout: timeoutSeconds,
    Sessions: link(paths.sessions),
    Status: { State: 'Enabled', Health: 'OK' },
    '@Hostplane.ActiveSessions': rt.sessions.size,
  };
}

export function sessions(rt: Runtime): Record<string, unknown> {
  return collection(
    paths.sessions,
    'SessionCollection',
    'Session Collection',
    [...rt.sessions.values()].map(paths.session),
  );
}

export function session(s: Session): Record<string, unknown> {
  return {
    '@odata.id': paths.session(s),
    '@odata.type': '#Session.v1_6_0.Session',
    Id: s.id,
    Name: 'User Session',
    UserName: s.user,
    CreatedTime: new Date(s.createdAt).toISOString(),
  };
}

export function systems(rt: Runtime): Record<string, unknown> {
  return collection(paths.systems, 'ComputerSystemCollection', 'Computer System Collection', [
    paths.system(rt.machine),
  ]);
}

/** The ComputerSystem without its ETag (which is computed from this). */
type SystemSettings = Pick<Settings, 'resetTypes' | 'resetActionInfo'>;

function systemBody(rt: Runtime, settings: SystemSettings): Record<string, unknown> {
  const m = rt.machine;
  const os = m.drives.find((d) => d.os)?.os ?? null;
  const install = m.installParams;
  return {
    '@odata.id': paths.system(m),
    '@odata.type': '#ComputerSystem.v1_20_0.ComputerSystem',
    Id: m.systemId,
    Name: 'System',
    SystemType: 'Physical',
    Manufacturer: m.manufacturer,
    Model: m.model,
    SerialNumber: m.serial,
    UUID: m.uuid,
    AssetTag: m.assetTag,
    HostName: m.power === 'On' && os && m.installState !== 'installing' ? os.hostname : '',
    BiosVersion: '2.19.1',
    PowerState: m.power,
    Status: { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' },
    ProcessorSummary: {
      Count: m.cpus,
      LogicalProcessorCount: m.cpus * 32,
      Model: 'Emulated Xeon Gold 6338',
      Status: { State: 'Enabled', Health: 'OK' },
    },
    MemorySummary: { TotalSystemMemoryGiB: m.memoryGiB, Status: { State: 'Enabled', Health: 'OK' } },
    Boot: {
      BootSourceOverrideEnabled: m.boot.enabled,
      BootSourceOverrideTarget: m.boot.target,
      'BootSourceOverrideTarget@Redfish.AllowableValues': [...BOOT_TARGETS],
      BootSourceOverrideMode: 'UEFI',
    },
    EthernetInterfaces: link(paths.nics(m)),
    Storage: link(paths.storages(m)),
    Links: { ManagedBy: [link(paths.manager(m))], Chassis: [] },
    Actions: {
      '#ComputerSystem.Reset': settings.resetActionInfo
        ? { target: paths.reset(m), '@Redfish.ActionInfo': paths.resetInfo(m) }
        : { target: paths.reset(m), 'ResetType@Redfish.AllowableValues': [...settings.resetTypes] },
    },
    Oem: {
      Hostplane: {
        '@odata.type': '#HostplaneComputerSystem.v1_0_0.HostplaneComputerSystem',
        // PasswordHash is write-only: read back as null, as Redfish does with secrets.
        Install: install ? { ...install, PasswordHash: null } : null,
        InstallState: m.installState,
        InstallMessage: m.installMessage,
        InstalledImage: os?.image ?? null,
      },
    },
  };
}

export function system(rt: Runtime, settings: SystemSettings): { body: Record<string, unknown>; etag: string } {
  const body = systemBody(rt, settings);
  const etag = etagOf(body);
  return { body: { ...body, '@odata.etag': etag }, etag };
}

/** The reset action's parameters (ActionInfo), for BMCs that do not list them inline. */
export function resetActionInfo(rt: Runtime, settings: SystemSettings): Record<string, unknown> {
  return {
    '@odata.id': paths.resetInfo(rt.machine),
    '@odata.type': '#ActionInfo.v1_3_0.ActionInfo',
    Id: 'ResetActionInfo',
    Name: 'Reset Action Info',
    Parameters: [{ Name: 'ResetType', Required: true, DataType: 'String', AllowableValues: [...settings.resetTypes] }],
  };
}

export function nics(rt: Runtime): Record<string, unknown> {
  const m = rt.machine;
  return collection(
    paths.nics(m),
    'EthernetInterfaceCollection',
    'Ethernet Network Interface Collection',
    m.nics.map((n) => paths.nic(m, n)),
  );
}

export function nic(rt: Runtime, n: Nic): Record<string, unknown> {
  return {
    '@odata.id': paths.nic(rt.machine, n),
    '@odata.type': '#EthernetInterface.v1_9_0.EthernetInterface',
    Id: n.id,
    Name: 'Ethernet Interface',
    MACAddress: n.mac.toUpperCase(),
    PermanentMACAddress: n.mac.toUpperCase(),
    SpeedMbps: 25_000,
    LinkStatus: rt.machine.power === 'On' ? 'LinkUp' : 'LinkDown',
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

export function storages(rt: Runtime): Record<string, unknown> {
  const m = rt.machine;
  return collection(paths.storages(m), 'StorageCollection', 'Storage Collection', [paths.storage(m)]);
}

export function storage(rt: Runtime): Record<string, unknown> {
  const m = rt.machine;
  return {
    '@odata.id': paths.storage(m),
    '@odata.type': '#Storage.v1_15_0.Storage',
    Id: m.storageId,
    Name: 'Integrated RAID Controller',
    Drives: m.drives.map((d) => link(paths.drive(m, d))),
    'Drives@odata.count': m.drives.length,
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

export function drive(rt: Runtime, d: DriveState, erasing: boolean): Record<string, unknown> {
  const m = rt.machine;
  return {
    '@odata.id': paths.drive(m, d),
    '@odata.type': '#Drive.v1_17_0.Drive',
    Id: d.id,
    Name: d.name,
    CapacityBytes: d.capacityBytes,
    MediaType: 'SSD',
    Protocol: 'SATA',
    Status: { State: erasing ? 'Updating' : 'Enabled', Health: 'OK' },
    ...(erasing ? { Operations: [{ OperationName: 'Sanitize', PercentageComplete: 50 }] } : {}),
    Actions: { '#Drive.SecureErase': { target: paths.erase(m, d) } },
  };
}

export function managers(rt: Runtime): Record<string, unknown> {
  return collection(paths.managers, 'ManagerCollection', 'Manager Collection', [paths.manager(rt.machine)]);
}

export function manager(rt: Runtime): Record<string, unknown> {
  const m = rt.machine;
  return {
    '@odata.id': paths.manager(m),
    '@odata.type': '#Manager.v1_17_0.Manager',
    Id: m.managerId,
    Name: 'Manager',
    ManagerType: 'BMC',
    Model: 'Hostplane Emulated BMC',
    FirmwareVersion: m.firmware,
    UUID: m.uuid,
    PowerState: 'On',
    Status: { State: 'Enabled', Health: 'OK' },
    VirtualMedia: link(paths.media(m)),
    Links: { ManagerForServers: [link(paths.system(m))] },
    Actions: {
      '#Manager.Reset': {
        target: `${paths.manager(m)}/Actions/Manager.Reset`,
        'ResetType@Redfish.AllowableValues': ['GracefulRestart'],
      },
    },
  };
}

export function mediaCollection(rt: Runtime): Record<string, unknown> {
  const m = rt.machine;
  return collection(
    paths.media(m),
    'VirtualMediaCollection',
    'Virtual Media Services',
    m.media.map((s) => paths.slot(m, s)),
  );
}

export function mediaSlot(rt: Runtime, s: MediaSlot, actions: boolean): Record<string, unknown> {
  const m = rt.machine;
  return {
    '@odata.id': paths.slot(m, s),
    '@odata.type': '#VirtualMedia.v1_6_0.VirtualMedia',
    Id: s.id,
    Name: s.name,
    MediaTypes: s.mediaTypes,
    Image: s.image,
    ImageName: s.image ? (s.image.split('/').pop() ?? s.image) : null,
    Inserted: s.inserted,
    WriteProtected: s.writeProtected,
    ConnectedVia: s.inserted ? 'URI' : 'NotConnected',
    TransferProtocolType: s.image ? s.image.split(':')[0]?.toUpperCase() : null,
    ...(actions
      ? {
          Actions: {
            '#VirtualMedia.InsertMedia': { target: paths.insert(m, s) },
            '#VirtualMedia.EjectMedia': { target: paths.eject(m, s) },
          },
        }
      : {}),
  };
}

export function taskService(): Record<string, unknown> {
  return {
    '@odata.id': paths.taskService,
    '@odata.type': '#TaskService.v1_2_0.TaskService',
    Id: 'TaskService',
    Name: 'Task Service',
    ServiceEnabled: true,
    CompletedTaskOverWritePolicy: 'Oldest',
    Tasks: link(TASKS),
    Status: { State: 'Enabled', Health: 'OK' },
  };
}

export function tasks(rt: Runtime): Record<string, unknown> {
  return collection(
    TASKS,
    'TaskCollection',
    'Task Collection',
    [...rt.tasks.values()].map((t) => String(taskResource(t)['@odata.id'])),
  );
}
