// Tokenizer cost of pathological ShareGPT messages: one "word" without any space (letters, CJK,
// punctuation) of 10 KB, 100 KB and 1 MB, and an ordinary English text of the same sizes for
// comparison. Prints seconds per MB (MB = 10^6 characters) and tokens; a linear tokenizer gives the
// same s/MB at every size. Before the run-length bound (src/workload/tokens.ts), one 10 KB word took 14 s.
import './lib/clean-exit.js'; // first: whatever throws below is one line, not a stack trace
import { tokenCounter } from '../src/workload/tokens.js';
import { numberArgs } from './lib/args.js';
import { machineLine } from './lib/machine.js';

const opts = numberArgs({ rounds: 3 });
const SIZES = [10_000, 100_000, 1_000_000];
const ENGLISH =
  'The storage tier holds the KV cache entries that no longer fit in GPU or CPU memory, and every read of it is on the critical path of a decode step. ';

const inputs: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['letters (a…)', (n) => 'abcdefghij'.repeat(Math.ceil(n / 10)).slice(0, n)],
  ['one letter (aaa…)', (n) => 'a'.repeat(n)],
  ['CJK (中文…)', (n) => '中文文本没有空格'.repeat(Math.ceil(n / 8)).slice(0, n)],
  ['punctuation (!?…)', (n) => '!?.,;:'.repeat(Math.ceil(n / 6)).slice(0, n)],
  ['spaces only', (n) => ' '.repeat(n)],
  ['English text', (n) => ENGLISH.repeat(Math.ceil(n / ENGLISH.length)).slice(0, n)],
];

console.log(machineLine());
console.log(`tokenizer cl100k_base, ${opts.rounds} rounds per input (median and every round, seconds per 10^6 characters)`);
const counter = tokenCounter('cl100k_base');
counter.count('warm up: builds the encoder (~1 s) before anything is timed');
for (const [name, make] of inputs) {
  for (const size of SIZES) {
    const text = make(size);
    const rounds: number[] = [];
    let tokens = 0;
    for (let r = 0; r < opts.rounds; r++) {
      const start = process.hrtime.bigint();
      tokens = counter.count(text);
      rounds.push(Number(process.hrtime.bigint() - start) / 1e9 / (size / 1e6));
    }
    const median = [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)] ?? 0;
    console.log(
      `${name.padEnd(20)} ${String(size).padStart(9)} chars  ${median.toFixed(3)} s/MB  (rounds ${rounds.map((x) => x.toFixed(3)).join(', ')})  ${tokens} tokens`,
    );
  }
}
