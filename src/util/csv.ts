// One CSV record's fields. Hand-written rather than a package (csv-parse, fast-csv): the traces read
// here are plain one-record-per-line CSV, the whole need is a field splitter with RFC 4180 quoting,
// and lines read by util/text-lines.ts keep their exact file line numbers for skipped-row reports.
// A quoted field spanning lines is not supported: its pieces come out malformed.

function skipBlanks(line: string, from: number): number {
  let i = from;
  while (line[i] === ' ' || line[i] === '\t') i++;
  return i;
}

/**
 * Fields of one CSV record (RFC 4180 quotes, `""` escapes; blanks around a quoted field are
 * tolerated and dropped); undefined if a quote is malformed.
 */
export function splitCsvLine(line: string): string[] | undefined {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    const quote = skipBlanks(line, i);
    if (line[quote] === '"') {
      let value = '';
      i = quote + 1;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q === -1) return undefined;
        value += line.slice(i, q);
        i = q + 1;
        if (line[i] !== '"') break;
        value += '"';
        i++;
      }
      i = skipBlanks(line, i);
      if (i < line.length && line[i] !== ',') return undefined;
      fields.push(value);
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      fields.push(line.slice(i, end));
      i = end;
    }
    if (i >= line.length) return fields;
    i++; // past the comma: another field follows, possibly empty
  }
}
