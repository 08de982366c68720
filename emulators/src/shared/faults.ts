// What every emulator's fault knobs share: checking a change sent to /__emulator/faults (numbers
// ≥ 0, errorRate at most 1, flags, `loseNext` as a route key), and the decisions taken per call
// (answer 500 now, lose the answer of work already done). Each emulator lists its own knobs and
// adds what only it has (Wings down, cPanel's failNext, …).

/** The knobs every emulator has. */
export interface CommonKnobs {
  latencyMs: number;
  down: boolean;
  hang: boolean;
  errorRate: number;
  loseResponses: number;
  loseNext: string | null;
}

export interface KnobSpec<K> {
  numbers: readonly (keyof K & string)[];
  flags: readonly (keyof K & string)[];
  /** Knobs of another shape: set `out[key]` and return true, throw when the value is wrong. */
  other?: (key: string, value: unknown, out: Partial<K>) => boolean;
}

/** Check a change (a JSON body from POST /__emulator/faults); throws on anything unknown or out of range. */
export function parseKnobs<K extends object>(input: unknown, spec: KnobSpec<K>): Partial<K> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new Error('expected a JSON object');
  const out: Partial<K> = {};
  const set = (key: string, value: unknown) => {
    (out as Record<string, unknown>)[key] = value;
  };
  for (const [key, value] of Object.entries(input)) {
    if ((spec.numbers as readonly string[]).includes(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`${key}: a number >= 0`);
      if (key === 'errorRate' && value > 1) throw new Error('errorRate: between 0 and 1');
      set(key, value);
    } else if ((spec.flags as readonly string[]).includes(key)) {
      if (typeof value !== 'boolean') throw new Error(`${key}: true or false`);
      set(key, value);
    } else if (key === 'loseNext') {
      if (value !== null && typeof value !== 'string') throw new Error('loseNext: a route key or null');
      set(key, value);
    } else if (!spec.other?.(key, value, out)) {
      throw new Error(`unknown fault knob ${key}`);
    }
  }
  return out;
}

/** Whether this call answers 500 without doing anything. */
export function takeError(faults: Pick<CommonKnobs, 'errorRate'>): boolean {
  return faults.errorRate > 0 && Math.random() < faults.errorRate;
}

/**
 * Whether this call (already done) loses its answer; consumes a count or a `loseNext` naming one
 * of `keys` (its route key, and whatever else the emulator names calls by).
 */
export function takeLoss(
  faults: Pick<CommonKnobs, 'loseNext' | 'loseResponses'>,
  keys: string | readonly string[],
): boolean {
  const names = typeof keys === 'string' ? [keys] : keys;
  if (faults.loseNext !== null && names.includes(faults.loseNext)) {
    faults.loseNext = null;
    return true;
  }
  const lose = faults.loseResponses;
  if (lose > 0 && lose < 1) return Math.random() < lose;
  if (lose >= 1) {
    faults.loseResponses = Math.floor(lose) - 1;
    return true;
  }
  return false;
}

/** Consume one of a counted knob (the next N …); true when it fired. */
export function takeCount<K extends string>(faults: Record<K, number>, knob: K): boolean {
  if (faults[knob] < 1) return false;
  faults[knob] = Math.floor(faults[knob]) - 1;
  return true;
}
