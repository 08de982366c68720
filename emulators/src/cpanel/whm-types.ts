// What a WHM API 1 function hands back to the dispatcher, which wraps it in the envelope
// `{metadata:{command, version, result, reason, output?}, data?}`.

export interface WhmAnswer {
  /** `data` (absent when the function returns nothing). */
  data?: unknown;
  /** `metadata.reason` on success (default "OK"). */
  reason?: string;
  /** `metadata.output.raw`. */
  raw?: string;
  warnings?: string[];
}
