// The README is for users: short, the two set-up commands first, every link alive, every dependency
// named with its reason. The long material lives in docs/, one page per topic, linked from it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anchorsOf, codeBlocks, headingSlug, isExternal, linksOf, quotedNames, tableAfter, withoutCodeBlocks } from './markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/test/docs → the repository
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const README = read('README.md');
const DOC_PAGES = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
/** Every Markdown file whose links are checked: the README, the docs pages and the two guides that link into them. */
const LINKED_FILES = ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', ...DOC_PAGES];

const README_MAX_LINES = 400;
const TABLE_ROW_MAX = 300;
const SET_UP_COMMANDS = [
  'npm ci && npx kv-cache --model tiny-1b --num-users 8 --duration 30 --gpu-mem-gb 0 --cpu-mem-gb 0.25 --generation-mode none --output /tmp/kv-cache-demo.json',
  'npm test',
].join('\n');

/** Where a link is broken, as a readable line (`README.md:12 → docs/x.md#y: no such anchor`), or undefined when it is fine. */
function linkProblem(file: string, target: string, line: number, anchorCache: Map<string, Set<string>>): string | undefined {
  const [path = '', fragment] = target.split('#', 2);
  const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURIComponent(path));
  const where = `${file}:${String(line)} → ${target}`;
  if (!existsSync(resolved)) return `${where}: no such file`;
  if (fragment === undefined || fragment === '') return undefined;
  if (!resolved.endsWith('.md') || !statSync(resolved).isFile()) return `${where}: an anchor into a file that is not Markdown`;
  const key = relative(ROOT, resolved);
  let anchors = anchorCache.get(key);
  if (anchors === undefined) {
    anchors = anchorsOf(read(key));
    anchorCache.set(key, anchors);
  }
  return anchors.has(fragment) ? undefined : `${where}: no such anchor`;
}

describe('README for users', () => {
  test(`is at most ${String(README_MAX_LINES)} lines`, () => {
    const lines = README.endsWith('\n') ? README.split('\n').length - 1 : README.split('\n').length;
    assert.ok(lines <= README_MAX_LINES, `README.md has ${String(lines)} lines`);
  });

  test('opens with the title and then the two set-up commands, exactly', () => {
    assert.equal(codeBlocks(README)[0], SET_UP_COMMANDS);
    const beforeBlock = README.slice(0, README.indexOf('```')).trim();
    assert.equal(beforeBlock, '# kvcache-bench');
  });

  test('links every docs page', () => {
    const linked = new Set(linksOf(README).map((link) => link.target.split('#')[0]));
    const unlinked = DOC_PAGES.filter((page) => page.endsWith('.md') && !linked.has(page));
    assert.deepEqual(unlinked, []);
  });

  test('names every npm dependency in its Dependencies table, and nothing else there', () => {
    const manifest = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const declared = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)].sort();
    const rows = tableAfter(README, '## Dependencies');
    const named = rows.flatMap((row) => quotedNames(row[0] ?? '')).sort();
    assert.deepEqual(named, declared);
    for (const row of rows.slice(1)) assert.ok((row[1] ?? '').length > 10, `no reason given for ${row[0] ?? '?'}`);
  });

  test('names every Debian package .ci/run installs in its system packages table', () => {
    const ci = read('.ci/run');
    const list = /for tool in ([^;]+);/.exec(ci);
    assert.ok(list, '.ci/run has no `for tool in …;` list');
    const installed = list[1]
      .trim()
      .split(/\s+/)
      .map((pair) => pair.slice(pair.indexOf(':') + 1))
      .sort();
    const rows = tableAfter(README, 'System packages');
    const named = rows.flatMap((row) => quotedNames(row[0] ?? '')).sort();
    assert.deepEqual(named, installed);
  });
});

describe('README and docs pages', () => {
  test('every relative link points to a file that exists, and to an anchor that exists', () => {
    const anchorCache = new Map<string, Set<string>>();
    const problems: string[] = [];
    let checked = 0;
    for (const file of LINKED_FILES) {
      for (const link of linksOf(read(file))) {
        if (isExternal(link.target)) continue;
        checked += 1;
        const problem = linkProblem(file, link.target, link.line, anchorCache);
        if (problem !== undefined) problems.push(problem);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked > 100, `only ${String(checked)} links found: the link reader is broken`);
  });

  test(`have no table row over ${String(TABLE_ROW_MAX)} characters`, () => {
    const long = ['README.md', ...DOC_PAGES].flatMap((file) =>
      withoutCodeBlocks(read(file)).flatMap((line, index) =>
        line.startsWith('|') && line.length > TABLE_ROW_MAX ? [`${file}:${String(index + 1)} (${String(line.length)})`] : [],
      ),
    );
    assert.deepEqual(long, []);
  });
});

describe('markdown helpers', () => {
  test('heading anchors follow GitHub', () => {
    assert.equal(headingSlug('I/O buffers in huge pages'), 'io-buffers-in-huge-pages');
    assert.equal(
      headingSlug('Autoscaling: the peak rule and the AUTOSCALING section'),
      'autoscaling-the-peak-rule-and-the-autoscaling-section',
    );
    assert.equal(headingSlug('Models: `kv-cache models`'), 'models-kv-cache-models');
    assert.equal(headingSlug('RC-1 · Model table — Same'), 'rc-1--model-table--same');
    assert.equal(headingSlug('Merged summary (`kv-cache merge DIR… [--output FILE]`)'), 'merged-summary-kv-cache-merge-dir---output-file');
    assert.equal(headingSlug('CPU per GiB/s'), 'cpu-per-gibs');
  });

  test('anchors: repeated headings are numbered, code blocks hold none, <a id> counts', () => {
    const text = ['# A', '## A', '```', '# B', '```', '<a id="rc-9"></a>', '### C d'].join('\n');
    assert.deepEqual([...anchorsOf(text)].sort(), ['a', 'a-1', 'c-d', 'rc-9']);
  });

  test('links: wrapped link text is found; links inside code are not', () => {
    const text = ['See [the', 'page](docs/x.md#y) and `[no](z.md)`.', '```', '[no](w.md)', '```', '![img](p.png "t")'].join('\n');
    assert.deepEqual(linksOf(text), [
      { target: 'docs/x.md#y', line: 1 },
      { target: 'p.png', line: 6 },
    ]);
  });

  test('tables: the rows of the first table after a heading, separator skipped', () => {
    const text = ['## T', '', '| a | b |', '|---|---|', '| `x`, `y` (dev) | why |', '', '| other |'].join('\n');
    assert.deepEqual(tableAfter(text, '## T'), [
      ['a', 'b'],
      ['`x`, `y` (dev)', 'why'],
    ]);
    assert.deepEqual(quotedNames('`x`, `y` (dev)'), ['x', 'y']);
  });
});
