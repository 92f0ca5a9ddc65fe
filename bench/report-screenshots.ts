// Makes the README's report screenshots from real runs (docs/report-one-run.png, docs/report-compare.png):
// a --seconds run of the small model with 4 users (CPU tier + storage), and a comparison of direct vs
// buffered I/O (--compare-seconds each); each report is opened in Chromium and screenshotted whole.
// Re-run it after the per-second timeline lands to refresh the pictures. Options: --seconds 20 --compare-seconds 10.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumMissing, launchChromium } from '../test/util/chromium.js';
import { numberArgs } from './lib/args.js';
import { PROJECT_ROOT, runKvCache } from './lib/kv-cache.js';
import { machineLine } from './lib/machine.js';

const opts = numberArgs({ seconds: 20, 'compare-seconds': 10 });
const SMALL_USERS = `user_templates:
  chatbot: { context_range: [64, 512], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
  coding: { context_range: [256, 1024], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
  document: { context_range: [256, 1024], generation_range: [16, 64], think_time_range: [0.01, 0.05] }
`;

const skip = chromiumMissing();
if (skip !== undefined) throw new Error(`cannot take screenshots: ${skip}`);
console.log(machineLine());
const dir = mkdtempSync(join(tmpdir(), 'kv-report-shots-'));
try {
  const config = join(dir, 'small.yaml');
  writeFileSync(config, SMALL_USERS);
  const run = async (name: string, seconds: number, extra: readonly string[]): Promise<string> => {
    const output = join(dir, name);
    const args = ['--model', 'tiny-1b', '--generation-mode', 'none', '--no-progress', '--config', config, '--num-users', '4'];
    const all = [...args, '--gpu-mem-gb', '0', '--duration', String(seconds), '--output', output, ...extra];
    console.log(`command: kv-cache ${all.join(' ')}`);
    const r = await runKvCache(all);
    if (r.code !== 0) throw new Error(`kv-cache exited ${r.code}: ${r.stderr}`);
    return output;
  };
  const one = await run('one-run.json', opts.seconds, ['--cpu-mem-gb', '0.05']);
  const direct = await run('direct.json', opts['compare-seconds'], ['--cpu-mem-gb', '0', '--io-mode', 'direct']);
  const buffered = await run('buffered.json', opts['compare-seconds'], ['--cpu-mem-gb', '0', '--io-mode', 'buffered']);
  for (const args of [
    ['report', one, '-o', join(dir, 'one.html')],
    ['compare', direct, buffered, '--html', join(dir, 'compare.html')],
  ]) {
    const r = await runKvCache(args);
    if (r.code !== 0) throw new Error(`kv-cache ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    console.log(r.stdout.trimEnd());
  }
  const browser = await launchChromium();
  try {
    for (const [html, png] of [
      ['one.html', 'report-one-run.png'],
      ['compare.html', 'report-compare.png'],
    ] as const) {
      const p = await browser.open(join(dir, html));
      if (p.errors.length > 0) throw new Error(p.errors.join('; '));
      await p.page.screenshot({ path: join(PROJECT_ROOT, 'docs', png), fullPage: true });
      console.log(`wrote docs/${png}`);
    }
  } finally {
    await browser.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
