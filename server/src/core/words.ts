// Counted nouns in messages people read: "1 session", "3 sessions", never "1 session(s)".

/** `n` and the noun in the right number (`many` when the plural is not the noun plus "s"). */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
