// Just enough Markdown reading for the documentation tests: headings' anchors as GitHub makes them,
// explicit `<a id>` anchors, relative links, code blocks and tables. Not a Markdown parser: the docs
// are written by hand in a small subset (ATX headings, fenced code, inline links, pipe tables).

/** A link found in a Markdown file: where it points, before resolving. */
export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

const FENCE = /^\s*```/;

/** The file's lines with every fenced code block blanked (kept as empty lines, so numbers stay). */
export function withoutCodeBlocks(text: string): string[] {
  let inCode = false;
  return text.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inCode = !inCode;
      return '';
    }
    return inCode ? '' : line;
  });
}

/** The fenced code blocks' contents, in order, each without its fences. */
export function codeBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) {
      if (current === undefined) current = [];
      else {
        blocks.push(current.join('\n'));
        current = undefined;
      }
    } else if (current !== undefined) current.push(line);
  }
  return blocks;
}

/**
 * The anchor GitHub gives a heading: lower case, inline-code backticks and emphasis dropped, every
 * character that is not a letter, digit, space, `-` or `_` removed, each space a `-` (so "a — b" is
 * `a--b`, as on GitHub).
 */
export function headingSlug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** Every anchor a link may name in this file: heading slugs (repeats get `-1`, `-2`…) and `<a id>`/`name`. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = headingSlug(heading[1]);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${String(count)}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

/** Inline links and images outside code (`[text](target)`, `![alt](target "title")`), text may wrap. */
export function linksOf(text: string): MarkdownLink[] {
  const prose = withoutCodeBlocks(text).join('\n');
  // Blank inline code spans (keeping their newlines) so that `[x](y)` inside code is not a link.
  const noSpans = prose.replace(/`[^`]*`/g, (span) => span.replace(/[^\n]/g, ' '));
  const links: MarkdownLink[] = [];
  for (const match of noSpans.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const line = noSpans.slice(0, match.index).split('\n').length;
    links.push({ target: match[1], line });
  }
  return links;
}

/** True for a link that leaves the repository (a URL with a scheme, or a mail address). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/** The rows of the first pipe table after the line that starts with `after`, each as trimmed cells. */
export function tableAfter(text: string, after: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(after));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('|')) {
      if (/^\|[-:| ]+\|$/.test(line)) continue;
      rows.push(
        line
          .slice(1, line.endsWith('|') ? -1 : undefined)
          .split('|')
          .map((cell) => cell.trim()),
      );
    } else if (rows.length > 0) break;
  }
  return rows;
}

/** The backquoted names in a table cell (`` `eslint`, `@eslint/js` (dev) `` gives both names). */
export function quotedNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
}
