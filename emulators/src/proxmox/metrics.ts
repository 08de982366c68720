// Synthesized usage, deterministic per VM and time: the live numbers of status/current and the
// rrddata history (upstreams.md §2.5, §2.6). History follows the VM's real power history: no
// data before it existed, only its maxima while it was stopped, everything while it ran.

import type { Vm } from './state.ts';
import { paramError } from './tasks.ts';

const TIMEFRAMES: Record<string, number> = { hour: 60, day: 1800, week: 10_800, month: 43_200, year: 604_800 };
const POINTS = 70;

/** 0..1, smooth in time, different for every VM. */
function wave(vmid: number, seconds: number, period: number): number {
  const phase = ((Math.imul(vmid, 2654435761) >>> 0) % 1000) / 159.15;
  return 0.5 + 0.35 * Math.sin(seconds / period + phase) + 0.15 * Math.sin(seconds / (period / 7) + phase * 3);
}

const MB = 1024 * 1024;

/** The numbers of status/current for a VM right now. */
export function liveUsage(vm: Vm, now = Date.now()): Record<string, number> {
  const running = vm.status === 'running' && vm.qmpstatus !== 'paused';
  const t = now / 1000;
  const uptime = vm.status === 'running' && vm.startedAt ? Math.floor((now - vm.startedAt) / 1000) : 0;
  const maxmem = vm.memoryMb * MB;
  return {
    cpus: vm.cores,
    cpu: running ? Number((0.02 + 0.3 * wave(vm.vmid, t, 300)).toFixed(4)) : 0,
    maxmem,
    mem: vm.status === 'running' ? Math.floor(maxmem * (0.2 + 0.3 * wave(vm.vmid, t, 900))) : 0,
    maxdisk: vm.diskGb * 1024 ** 3,
    disk: 0,
    uptime,
    netin: uptime * 12_000,
    netout: uptime * 9_000,
    diskread: uptime * 40_000,
    diskwrite: uptime * 25_000,
  };
}

function ranDuring(vm: Vm, from: number, to: number): boolean {
  const runs = vm.runs ?? (vm.status === 'running' ? [{ start: vm.startedAt ?? vm.createdAt, end: null }] : []);
  return runs.some((run) => run.start < to && (run.end === null || run.end > from));
}

/** GET …/rrddata: points oldest first over the timeframe, one per resolution step. */
export function rrdData(vm: Vm, params: Record<string, string>, now = Date.now()): Record<string, number>[] {
  const step = TIMEFRAMES[params.timeframe ?? ''];
  if (params.timeframe === undefined) throw paramError({ timeframe: 'property is missing and it is not optional' });
  if (step === undefined) {
    throw paramError({
      timeframe: `value '${params.timeframe}' does not have a value in the enumeration 'hour, day, week, month, year'`,
    });
  }
  const cf = params.cf ?? 'AVERAGE';
  if (cf !== 'AVERAGE' && cf !== 'MAX') {
    throw paramError({ cf: `value '${cf}' does not have a value in the enumeration 'AVERAGE, MAX'` });
  }
  const peak = cf === 'MAX' ? 1.35 : 1;
  const last = Math.floor(now / 1000 / step) * step;
  const maxmem = vm.memoryMb * MB;
  const points: Record<string, number>[] = [];
  for (let i = POINTS - 1; i >= 0; i--) {
    const time = last - i * step;
    const from = time * 1000;
    const to = (time + step) * 1000;
    if (to <= vm.createdAt) {
      points.push({ time });
      continue;
    }
    const point: Record<string, number> = { time, maxcpu: vm.cores, maxmem, maxdisk: vm.diskGb * 1024 ** 3, disk: 0 };
    if (ranDuring(vm, from, to)) {
      const w = wave(vm.vmid, time, step * 9);
      point.cpu = Number(Math.min(1, (0.02 + 0.35 * w) * peak).toFixed(4));
      point.mem = Math.floor(Math.min(maxmem, maxmem * (0.2 + 0.35 * w) * peak));
      point.netin = Math.floor((2_000 + 60_000 * w) * peak);
      point.netout = Math.floor((1_500 + 35_000 * w) * peak);
      point.diskread = Math.floor(12_000 * w * peak);
      point.diskwrite = Math.floor(24_000 * w * peak);
    }
    points.push(point);
  }
  return points;
}
