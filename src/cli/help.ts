// `kv-cache run --help`, written from the flag table: flags grouped by purpose, each with its default.
import { FLAG_GROUPS, FLAG_ROWS } from '../settings/flags.js';

type Row = (typeof FLAG_ROWS)[number];

function defaultText(f: Row): string {
  if (f.defaultText !== undefined) return f.defaultText;
  const d = f.default;
  if (f.kind === 'bool') return d === true ? 'on' : 'off';
  if (typeof d === 'number' && f.kind === 'float') return Number.isInteger(d) ? d.toFixed(1) : String(d);
  return String(d);
}

function metavar(f: Row): string {
  if (f.kind === 'bool') return '';
  if (f.choices !== undefined) return ` {${f.choices.join(',')}}`;
  return f.kind === 'int' ? ' N' : f.kind === 'float' ? ' X' : ` ${f.metavar ?? 'VALUE'}`;
}

function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line !== '' && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line === '' ? w : `${line} ${w}`;
  }
  if (line !== '') lines.push(line);
  return lines.join(`\n${indent}`);
}

const HELP_WIDTH = 100;

/** One option of a help text: `head` in the left column, `text` wrapped at the help width beside (or below) it. */
export function helpLine(head: string, text: string, indent: string): string {
  const body = wrap(text, HELP_WIDTH - indent.length, indent);
  return head.length < indent.length - 1 ? `${head.padEnd(indent.length)}${body}` : `${head}\n${indent}${body}`;
}

export function helpText(): string {
  const out: string[] = [
    'Usage: kv-cache [run] [options]',
    '',
    'Measures whether a storage device can serve as the KV-cache offload tier of an LLM inference server.',
  ];
  const indent = ' '.repeat(36);
  for (const group of FLAG_GROUPS) {
    out.push('', `${group}:`);
    for (const f of FLAG_ROWS.filter((x) => x.group === group)) {
      out.push(helpLine(`  --${f.name}${metavar(f)}`, `${f.help} (default: ${defaultText(f)})`, indent));
    }
  }
  out.push('', helpLine('  -h, --help', 'Show this help and exit', indent));
  return `${out.join('\n')}\n`;
}
