// A node's health at its last check in words — up, down, unknown — with the panel's status
// shape and colour repeating it (never colour alone).

const TONE: Record<string, string> = { up: 'good', down: 'bad' };

export function Health({ value }: { value: string }) {
  return <span className={`status status-${TONE[value] ?? 'off'}`}>{value}</span>;
}
