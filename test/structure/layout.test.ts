// Source layout rules that are not about imports (issue 35, item 8): a doc comment documents the
// declaration below it, never an import, and the results schema stays a table of contents of small
// files, one per block, rather than one file every new block makes longer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/test/structure → the repository

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Places (file:line) where a `/** … *\/` comment is followed, after blank lines at most, by an import. */
function docCommentsOnImports(file: string, text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trimStart().startsWith('/**')) continue;
    let end = i;
    while (end < lines.length && !lines[end].includes('*/')) end++;
    let next = end + 1;
    while (next < lines.length && lines[next].trim() === '') next++;
    if (next < lines.length && /^import[\s{]/.test(lines[next])) found.push(`${file}:${i + 1}`);
    i = end;
  }
  return found;
}

test('the doc-comment check finds a comment on an import and passes one on a declaration', () => {
  const text = [
    "import a from 'a';",
    '/** About B. */',
    "import type { B } from 'b';",
    '',
    '/**',
    ' * About C.',
    ' */',
    'export interface C {}',
  ];
  assert.deepEqual(docCommentsOnImports('x.ts', text.join('\n')), ['x.ts:2']);
});

test('no doc comment in src/ sits on an import instead of the declaration it documents', () => {
  const found = sourceFiles(join(ROOT, 'src')).flatMap((f) => docCommentsOnImports(relative(ROOT, f), readFileSync(f, 'utf8')));
  assert.deepEqual(found, []);
});

test('the results schema keeps its blocks in files of their own: results-schema.ts under 400 lines, each block file under 150', () => {
  const dir = join(ROOT, 'src', 'report');
  const lines = (name: string): number => readFileSync(join(dir, name), 'utf8').split('\n').length;
  assert.ok(lines('results-schema.ts') < 400, `results-schema.ts has ${lines('results-schema.ts')} lines`);
  const long = readdirSync(dir)
    .filter((n) => n.endsWith('-schema.ts') && n !== 'results-schema.ts')
    .filter((n) => lines(n) >= 150);
  assert.deepEqual(long, []);
});
