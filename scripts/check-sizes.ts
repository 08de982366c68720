// The size rules of server/src (issue 34), checked in .ci/run beside the import rules
// (.dependency-cruiser.cjs): no file over MAX_FILE_LINES lines, no function over
// MAX_FUNCTION_LINES lines. Route registration modules (`*.routes.ts`, the surfaces' `plugin.ts`)
// are left out of the function rule: their one function is the list of routes, each handler a
// few lines. Lines are counted as the editor shows them, blank lines and comments included.
//
//   node scripts/check-sizes.ts [--report]   (--report: the 20 longest of each)

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseSync } from '@swc/core';

const ROOT = join(import.meta.dirname, '..');
const SOURCE = join(ROOT, 'server', 'src');
export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 120;
const REGISTRATION = /(\.routes\.ts|\/plugin\.ts)$/;

const FUNCTION_NODES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'MethodProperty',
  'GetterProperty',
  'SetterProperty',
  'Constructor',
]);

interface Measured {
  file: string;
  name: string;
  line: number;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Line number (1-based) of each byte offset, for one file. */
function lineIndex(text: string): (offset: number) => number {
  const bytes = Buffer.from(text);
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

type Node = { type?: string; span?: { start: number; end: number }; [key: string]: unknown };

function functionName(node: Node, parentKey: string | null, parent: Node | null): string {
  const ident = (n: unknown): string | null =>
    n && typeof n === 'object' && 'value' in n && typeof (n as { value: unknown }).value === 'string'
      ? ((n as { value: string }).value as string)
      : null;
  const own = ident(node.identifier) ?? ident(node.key);
  if (own) return own;
  if (parent?.type === 'VariableDeclarator') return ident(parent.id) ?? '(anonymous)';
  if (parent?.type === 'KeyValueProperty') return ident(parent.key) ?? '(anonymous)';
  return parentKey === 'arguments' ? '(callback)' : '(anonymous)';
}

export function measure(file: string): { lines: number; functions: Measured[] } {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const module = parseSync(text, { syntax: 'typescript', target: 'es2022' }) as unknown as Node;
  // swc's spans count on from every earlier parse: this module's own start is the base.
  const base = (module.span as { start: number }).start;
  const lineOf = lineIndex(text);
  const functions: Measured[] = [];
  const walk = (node: unknown, parent: Node | null, parentKey: string | null): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, parent, parentKey);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const n = node as Node;
    if (n.type && FUNCTION_NODES.has(n.type) && n.span) {
      const first = lineOf(n.span.start - base);
      const last = lineOf(Math.max(n.span.start, n.span.end - 1) - base);
      functions.push({
        file: relative(ROOT, file),
        name: functionName(n, parentKey, parent),
        line: first,
        lines: last - first + 1,
      });
    }
    for (const [key, value] of Object.entries(n)) {
      if (key === 'span' || !value || typeof value !== 'object') continue;
      walk(value, n.type ? n : parent, key);
    }
  };
  walk(module, null, null);
  return { lines, functions };
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const complain = (line: string) => process.stderr.write(`${line}\n`);

function main(): void {
  const report = process.argv.includes('--report');
  const files = sourceFiles(SOURCE).sort();
  const sizes: { file: string; lines: number }[] = [];
  const functions: Measured[] = [];
  for (const file of files) {
    const measured = measure(file);
    sizes.push({ file: relative(ROOT, file), lines: measured.lines });
    if (!REGISTRATION.test(file)) functions.push(...measured.functions);
  }
  const longFiles = sizes.filter((s) => s.lines > MAX_FILE_LINES);
  const longFunctions = functions.filter((f) => f.lines > MAX_FUNCTION_LINES);
  if (report) {
    say('longest files:');
    for (const s of [...sizes].sort((a, b) => b.lines - a.lines).slice(0, 20)) say(`  ${s.lines}\t${s.file}`);
    say('longest functions:');
    for (const f of [...functions].sort((a, b) => b.lines - a.lines).slice(0, 20)) {
      say(`  ${f.lines}\t${f.file}:${f.line} ${f.name}`);
    }
  }
  for (const s of longFiles) complain(`${s.file}: ${s.lines} lines (at most ${MAX_FILE_LINES})`);
  for (const f of longFunctions) {
    complain(`${f.file}:${f.line}: function ${f.name} is ${f.lines} lines (at most ${MAX_FUNCTION_LINES})`);
  }
  if (longFiles.length + longFunctions.length > 0) process.exit(1);
  say(`${files.length} files in server/src: none over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`);
}

main();
