// How free text becomes LIKE and regular-expression patterns that match it as written (the
// searchers compare them with each row's folded text). Pure functions: no database, no I/O.

/** Escape `\`, `%` and `_` so the text matches itself in `LIKE … ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/**
 * How free text matches a row's folded text: as a substring, where each space of the text (spaces
 * are collapsed) stands for any one space or punctuation mark, so `sao paulo` finds
 * `São-Paulo-web-21` and `web 1` finds `web-1` but not `web11`. `like` is the pattern for
 * `LIKE … ESCAPE '\'` (a space is `_`, served by the trigram index); `separated`, when the text has
 * a space, the regular expression that narrows what `_` let through to punctuation and spaces.
 */
export function textPatterns(text: string): { like: string; separated: string | null } {
  const words = text.split(' ');
  return {
    like: `%${words.map(escapeLike).join('_')}%`,
    separated: words.length > 1 ? words.map(escapeRegex).join('[[:space:][:punct:]]') : null,
  };
}

/** Escape every character but letters, digits and spaces, so the text matches itself in a POSIX (ARE) regular expression. */
export function escapeRegex(text: string): string {
  return text.replace(/[^\p{L}\p{N} ]/gu, '\\$&');
}
