// The machine's power and what happens when it boots. `ComputerSystem.Reset` moves the power
// state through PoweringOn / PoweringOff (powerDelayMs each); ForceOff is immediate. Each boot
// consumes a one-time boot override (`Once` → `Disabled`); booting the virtual CD with media
// inserted runs the installer: InstallState `installing`, then after installDelayMs `done`
// (the OS written on the first drive with the install parameters PATCHed into
// `Oem.Hostplane.Install`, the emulator's stand-in for a seed ISO), or `failed`. Losing power
// while installing fails the install.

import { type Ctx, cancel, later, type Runtime } from './context.ts';
import { message, RedfishError } from './http.ts';
import { logAction, type ResetType } from './state.ts';

function conflict(text: string): RedfishError {
  return new RedfishError(409, message('GeneralError', [], [], text));
}

/** The power state reached: settle timers cleared. */
function settle(ctx: Ctx, rt: Runtime): void {
  cancel(ctx, rt.powerTimer);
  rt.powerTimer = null;
}

/** Power is gone: an install in progress is interrupted. */
function lostPower(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  m.power = 'Off';
  m.revision++;
  if (m.installState === 'installing') {
    cancel(ctx, rt.installTimer);
    rt.installTimer = null;
    m.installState = 'failed';
    m.installMessage = 'The install was interrupted: the machine lost power.';
    m.installDueAt = null;
  }
}

function powerOn(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  m.power = 'PoweringOn';
  m.revision++;
  rt.powerTimer = later(ctx, ctx.settings.powerDelayMs, () => {
    rt.powerTimer = null;
    m.power = 'On';
    boot(ctx, rt);
    ctx.changed();
  });
}

/** A graceful power-down, then `after` (e.g. power on again for a restart). */
function powerDown(ctx: Ctx, rt: Runtime, after?: () => void): void {
  const m = rt.machine;
  m.power = 'PoweringOff';
  m.revision++;
  rt.powerTimer = later(ctx, ctx.settings.powerDelayMs, () => {
    rt.powerTimer = null;
    lostPower(ctx, rt);
    after?.();
    ctx.changed();
  });
}

/** Apply a ResetType (already checked against the allowable values). Throws 409 when the state forbids it. */
export function reset(ctx: Ctx, rt: Runtime, type: ResetType): void {
  const m = rt.machine;
  // ForceOff is the plug: it works at any time, a transition under way included.
  if (type === 'ForceOff') {
    if (m.power === 'Off') throw conflict('The system is already powered off.');
    logAction(m, `ComputerSystem.Reset ${type}`);
    settle(ctx, rt);
    lostPower(ctx, rt);
    return;
  }
  if (m.power === 'PoweringOn' || m.power === 'PoweringOff') {
    throw new RedfishError(409, message('ResourceInUse'));
  }
  const on = m.power === 'On';
  if (type === 'On' && on) throw conflict('The system is already powered on.');
  if (type === 'GracefulShutdown' && !on) throw conflict('The system is already powered off.');
  if (type !== 'On' && !on)
    throw conflict(
      type === 'Nmi' ? 'The system is powered off.' : 'The system is powered off; it cannot be restarted.',
    );
  logAction(m, `ComputerSystem.Reset ${type}`);
  switch (type) {
    case 'On':
      powerOn(ctx, rt);
      return;
    case 'GracefulShutdown':
      if (!ctx.faults.ignoreAcpi) powerDown(ctx, rt);
      return;
    case 'GracefulRestart':
      if (!ctx.faults.ignoreAcpi) powerDown(ctx, rt, () => powerOn(ctx, rt));
      return;
    case 'ForceRestart':
    case 'PowerCycle':
      settle(ctx, rt);
      lostPower(ctx, rt);
      powerOn(ctx, rt);
      return;
    case 'Nmi':
      return;
  }
}

/** The machine reached On: consume the boot override and boot what it says. */
function boot(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  m.boots++;
  const override = m.boot.enabled !== 'Disabled' && m.boot.target !== 'None' ? m.boot.target : null;
  if (m.boot.enabled === 'Once') m.boot = { enabled: 'Disabled', target: 'None' };
  m.revision++;
  if (override === 'Cd' || override === 'UsbCd') {
    const cd = m.media.find((s) => s.inserted && s.mediaTypes.some((t) => t === 'CD' || t === 'DVD'));
    if (cd?.image) {
      m.lastBoot = `Cd ${cd.image}`;
      startInstall(ctx, rt, cd.image);
      return;
    }
  }
  if (override === 'Pxe') {
    m.lastBoot = 'Pxe (no answer)';
    return;
  }
  m.lastBoot = m.drives.some((d) => d.os) ? 'Hdd' : 'Hdd (no operating system)';
}

function startInstall(ctx: Ctx, rt: Runtime, image: string): void {
  const m = rt.machine;
  cancel(ctx, rt.installTimer);
  rt.installTimer = null;
  m.installImage = image;
  m.installMessage = null;
  m.installDueAt = null;
  if (!m.installParams) {
    m.installState = 'failed';
    m.installMessage = 'The installer found no install parameters (Oem.Hostplane.Install): nothing to install with.';
    return;
  }
  m.installState = 'installing';
  if (ctx.faults.installHangs) return;
  m.installDueAt = Date.now() + ctx.settings.installDelayMs;
  scheduleInstall(ctx, rt);
}

/** Finish the running install at its due time (after a restart of the emulator too). */
export function scheduleInstall(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  if (m.installState !== 'installing' || m.installDueAt === null) return;
  cancel(ctx, rt.installTimer);
  rt.installTimer = later(ctx, Math.max(0, m.installDueAt - Date.now()), () => {
    rt.installTimer = null;
    finishInstall(ctx, rt);
    ctx.changed();
  });
}

function finishInstall(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  if (m.installState !== 'installing' || m.power !== 'On') return;
  m.installDueAt = null;
  m.revision++;
  if (ctx.faults.installFails || !m.installParams || !m.installImage) {
    m.installState = 'failed';
    m.installMessage = 'The installer stopped: no usable target disk was found.';
    return;
  }
  const params = m.installParams;
  const target = m.drives[0];
  if (!target) {
    m.installState = 'failed';
    m.installMessage = 'The installer stopped: the machine has no drives.';
    return;
  }
  target.os = {
    image: m.installImage,
    hostname: params.Hostname,
    sshKeys: [...params.SshKeys],
    passwordHash: params.PasswordHash,
    ipv4: params.IPv4,
    installedAt: new Date().toISOString(),
  };
  m.installState = 'done';
  m.installMessage = null;
}

/** After the emulator restarts: transitions that were under way end where they were going. */
export function resume(ctx: Ctx, rt: Runtime): void {
  const m = rt.machine;
  if (m.power === 'PoweringOn') m.power = 'On';
  if (m.power === 'PoweringOff') m.power = 'Off';
  if (m.installState === 'installing' && m.power !== 'On') {
    m.installState = 'failed';
    m.installMessage = 'The install was interrupted: the machine lost power.';
    m.installDueAt = null;
  }
  scheduleInstall(ctx, rt);
}
