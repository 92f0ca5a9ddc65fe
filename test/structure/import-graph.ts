// The import graph of src/, read from the import and export statements (TypeScript's parser, no type
// checking): its loops (strongly connected components) and the imports a layer table does not allow.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** Repository-relative paths with '/' separators, e.g. 'src/report/live.ts'. */
  readonly from: string;
  readonly to: string;
  /** `import type`, `export type` or every named binding marked `type`: gone at run time. */
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (clause === undefined) return false; // a bare `import './x.js'` runs the module
  if (clause.phaseModifier === ts.SyntaxKind.TypeKeyword) return true;
  if (clause.name !== undefined) return false;
  const bindings = clause.namedBindings;
  return (
    bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)
  );
}

/** Relative specifiers of one file's static imports/re-exports and dynamic `import('…')` calls. */
export function importsOf(fileName: string, text: string): Array<{ readonly specifier: string; readonly typeOnly: boolean }> {
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push({ specifier: node.moduleSpecifier.text, typeOnly: isTypeOnly(node) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg !== undefined && ts.isStringLiteral(arg)) found.push({ specifier: arg.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS));
  return found.filter((i) => i.specifier.startsWith('.'));
}

const posix = (p: string): string => p.split(sep).join('/');

/** Every import between files under `root/dir` (packages and node: modules left out). */
export function readImportGraph(root: string, dir = 'src'): ImportEdge[] {
  return sourceFiles(join(root, dir)).flatMap((file) => {
    const from = posix(relative(root, file));
    return importsOf(file, readFileSync(file, 'utf8')).map(({ specifier, typeOnly }) => ({
      from,
      to: posix(normalize(join(dirname(from), specifier.replace(/\.js$/, '.ts')))),
      typeOnly,
    }));
  });
}

/** The import loops: each strongly connected component of two or more files, or a file importing itself (Tarjan). */
export function importLoops(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    if (!next.has(e.to)) next.set(e.to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) loops.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return loops;
}

/** `src/<layer>/…` → the layer; undefined for a file directly under src/. */
export function layerOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts.length > 2 ? parts[1] : undefined;
}

export type LayerTable = Readonly<Record<string, { readonly imports: readonly string[]; readonly types?: readonly string[] }>>;

/** Imports between layers the table does not allow (a value import where only types may cross counts too). */
export function layerViolations(edges: readonly ImportEdge[], table: LayerTable): ImportEdge[] {
  return edges.filter((e) => {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    if (from === undefined || to === undefined || from === to) return false;
    const rule = table[from];
    if (rule === undefined) return true;
    return !(rule.imports.includes(to) || (e.typeOnly && (rule.types ?? []).includes(to)));
  });
}

/** The table as a graph (types included): a loop here means two layers on the same floor. */
export function tableLoops(table: LayerTable): string[][] {
  const edges = Object.entries(table).flatMap(([from, rule]) =>
    [...rule.imports, ...(rule.types ?? [])].map((to) => ({ from: `src/${from}/`, to: `src/${to}/`, typeOnly: false })),
  );
  return importLoops(edges).map((loop) => loop.map((p) => layerOf(p) ?? p));
}
