// The structure of src/ pinned: no import loops between files, no import a layer may not make
// (layers.ts), and a layer table that has floors (no loop between layers). Runs on the sources, so a
// new loop or an import up the floors fails here with the files named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { importLoops, importsOf, layerViolations, readImportGraph, tableLoops } from './import-graph.js';
import type { ImportEdge } from './import-graph.js';
import { ALLOWED_IMPORTS, KNOWN_EXCEPTIONS, LAYERS } from './layers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/test/structure → the repository
const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });
const show = (e: ImportEdge): string => `${e.from} → ${e.to}${e.typeOnly ? ' (types)' : ''}`;

test('import statements are read with their kind: type-only, value, re-export, dynamic', () => {
  const text = [
    "import type { A } from './a.js';",
    "import { type B, type C } from './b.js';",
    "import { D, type E } from './d.js';",
    "import F from './f.js';",
    "import './side-effect.js';",
    "export type { G } from './g.js';",
    "export { H } from './h.js';",
    "import { readFile } from 'node:fs';",
    "const m = await import('./lazy.js');",
    "let t: import('./typed.js').T;",
  ].join('\n');
  assert.deepEqual(importsOf('x.ts', text), [
    { specifier: './a.js', typeOnly: true },
    { specifier: './b.js', typeOnly: true },
    { specifier: './d.js', typeOnly: false },
    { specifier: './f.js', typeOnly: false },
    { specifier: './side-effect.js', typeOnly: false },
    { specifier: './g.js', typeOnly: true },
    { specifier: './h.js', typeOnly: false },
    { specifier: './lazy.js', typeOnly: false },
    { specifier: './typed.js', typeOnly: true },
  ]);
});

test('a loop of files is found, however long, and only the files in it are named', () => {
  const edges = [
    edge('src/a/x.ts', 'src/a/y.ts'),
    edge('src/a/y.ts', 'src/b/z.ts', true),
    edge('src/b/z.ts', 'src/a/x.ts'),
    edge('src/b/z.ts', 'src/c/w.ts'),
    edge('src/c/v.ts', 'src/c/v.ts'),
  ];
  assert.deepEqual(importLoops(edges), [['src/a/x.ts', 'src/a/y.ts', 'src/b/z.ts'], ['src/c/v.ts']]);
  assert.deepEqual(importLoops(edges.slice(0, 2)), []);
});

test('an import up the floors, or a value import where only types may cross, is a violation', () => {
  const table = { low: { imports: [] }, mid: { imports: ['low'] }, high: { imports: ['low'], types: ['mid'] } };
  const edges = [
    edge('src/mid/a.ts', 'src/low/b.ts'),
    edge('src/low/b.ts', 'src/mid/a.ts', true),
    edge('src/high/c.ts', 'src/mid/a.ts', true),
    edge('src/high/c.ts', 'src/mid/a.ts'),
    edge('src/other/d.ts', 'src/low/b.ts'),
    edge('src/low/b.ts', 'src/low/e.ts'),
  ];
  assert.deepEqual(layerViolations(edges, table).map(show), [
    'src/low/b.ts → src/mid/a.ts (types)',
    'src/high/c.ts → src/mid/a.ts',
    'src/other/d.ts → src/low/b.ts',
  ]);
  assert.deepEqual(tableLoops({ ...table, low: { imports: ['high'] } }), [['high', 'low', 'mid']]);
});

test('src/: every top-level directory is a layer of the table, and the table has floors (no loop between layers)', () => {
  const dirs = readdirSync(`${ROOT}src`, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.deepEqual(dirs, [...LAYERS].sort());
  assert.deepEqual(tableLoops(ALLOWED_IMPORTS), []);
});

test('src/: 0 import loops and 0 imports the layer table does not allow', (t) => {
  const edges = readImportGraph(ROOT);
  assert.ok(edges.length > 500, `read ${edges.length} imports: the walk found the sources`);
  const loops = importLoops(edges);
  const known = (e: ImportEdge): boolean => KNOWN_EXCEPTIONS.some((k) => k.from === e.from && k.to === e.to);
  const violations = layerViolations(edges, ALLOWED_IMPORTS);
  t.diagnostic(
    `${edges.length} imports; ${loops.length} loops; ${violations.length} up-floor imports (${violations.filter(known).length} known)`,
  );
  assert.deepEqual(loops, []);
  assert.deepEqual(violations.filter((e) => !known(e)).map(show), []);
});
