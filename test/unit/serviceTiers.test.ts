/**
 * The tiers of services/ (docs/architecture.md, "services"), read from the imports of every
 * services/**\/*.ts file with TypeScript's own parser:
 *
 *   kernel     services/kernel/**: cross-cutting helpers of no business area (settings included)
 *   base       services/workflows/**: the workflow graph, artifact, views and the runnable rule (read and validate)
 *   use cases  every other folder: publishing (deploy, create, import, bundles) and the feature areas
 *
 * An area is a folder directly under services/ (the kernel is one area). Imports point down the
 * tiers or sideways, never up, and the areas import each other without a cycle. Type-only
 * imports count: they couple the areas as much as value imports do. Each failure names the edge.
 */
import path from 'node:path';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import ts from 'typescript';

const root = path.resolve(__dirname, '../..');
const servicesDir = path.join(root, 'services');

const TIERS = ['kernel', 'base', 'use case'] as const;
type Tier = (typeof TIERS)[number];
const BASE_AREAS = new Set(['workflows']);

/** The area of a file, given relative to services/: its first folder, or the file itself when it lies at the root. */
function areaOf(rel: string): string {
  const [first, ...rest] = rel.split('/');
  return rest.length === 0 ? rel : first;
}

function tierOf(area: string): Tier {
  if (area === 'kernel') return 'kernel';
  return BASE_AREAS.has(area) ? 'base' : 'use case';
}

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : name.endsWith('.ts') ? [full] : [];
  });

function resolveModule(fromFile: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

interface Edge {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at compile time, so no runtime cycle runs through it. */
  typeOnly?: boolean;
}

/** Every import, re-export, `import()` and `require()` between two files of services/, as paths relative to services/. */
function serviceImports(): Edge[] {
  const edges: Edge[] = [];
  for (const file of filesUnder(servicesDir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    const specifiers: Array<{ text: string; typeOnly: boolean }> = [];
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        specifiers.push({ text: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        specifiers.push({ text: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
      } else if (
        ts.isImportEqualsDeclaration(node) &&
        ts.isExternalModuleReference(node.moduleReference) &&
        ts.isStringLiteral(node.moduleReference.expression)
      ) {
        specifiers.push({ text: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
      } else if (
        ts.isCallExpression(node) &&
        (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
          (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
        node.arguments.length > 0 &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        specifiers.push({ text: node.arguments[0].text, typeOnly: false });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    for (const specifier of specifiers) {
      if (!specifier.text.startsWith('.')) continue;
      const target = resolveModule(file, specifier.text);
      if (target && target.startsWith(servicesDir + path.sep)) {
        const relative = (full: string) => path.relative(servicesDir, full).split(path.sep).join('/');
        edges.push({ from: relative(file), to: relative(target), typeOnly: specifier.typeOnly });
      }
    }
  }
  return edges;
}

const named = (edge: Edge) => `services/${edge.from} imports services/${edge.to}`;

/** Area-level arrows, each with the first file-level import that draws it. */
function areaGraph(edges: Edge[]): Map<string, Map<string, Edge>> {
  const graph = new Map<string, Map<string, Edge>>();
  for (const edge of edges) {
    const from = areaOf(edge.from);
    const to = areaOf(edge.to);
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    if (!graph.get(from)!.has(to)) graph.get(from)!.set(to, edge);
  }
  return graph;
}

/** One cycle per strongly connected group of areas (Tarjan), spelled out edge by edge. */
function areaCycles(graph: Map<string, Map<string, Edge>>): string[] {
  return cycles(graph).map(
    ({ group, steps }) =>
      `areas ${group.join(', ')} import each other: ${steps.map(({ from, to, edge }) => `${from} -> ${to} (${named(edge)})`).join('; ')}`,
  );
}

/** The runtime imports between single files (type-only imports are erased), as a graph of files. */
function fileGraph(edges: Edge[]): Map<string, Map<string, Edge>> {
  const graph = new Map<string, Map<string, Edge>>();
  for (const edge of edges) {
    if (edge.typeOnly) continue;
    if (!graph.has(edge.from)) graph.set(edge.from, new Map());
    graph.get(edge.from)!.set(edge.to, edge);
  }
  return graph;
}

function cycles(graph: Map<string, Map<string, Edge>>): Array<{ group: string[]; steps: Array<{ from: string; to: string; edge: Edge }> }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const connect = (area: string): void => {
    index.set(area, next);
    low.set(area, next++);
    stack.push(area);
    onStack.add(area);
    for (const to of graph.get(area)?.keys() ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(area, Math.min(low.get(area)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(area, Math.min(low.get(area)!, index.get(to)!));
      }
    }
    if (low.get(area) === index.get(area)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== area);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const area of [...graph.keys()].sort()) if (!index.has(area)) connect(area);

  return groups.map((group) => {
    // The shortest way from the group's first area back to itself, inside the group.
    const start = group[0];
    const cameFrom = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const area = queue.shift()!;
      for (const to of graph.get(area)?.keys() ?? []) {
        if (!group.includes(to)) continue;
        if (to === start) {
          last = area;
          break;
        }
        if (!cameFrom.has(to)) {
          cameFrom.set(to, area);
          queue.push(to);
        }
      }
    }
    const route = [start];
    for (let area = last!; area !== start; area = cameFrom.get(area)!) route.splice(1, 0, area);
    route.push(start);
    return { group, steps: route.slice(1).map((to, i) => ({ from: route[i], to, edge: graph.get(route[i])!.get(to)! })) };
  });
}

function upwardImports(edges: Edge[]): string[] {
  return edges
    .filter((edge) => TIERS.indexOf(tierOf(areaOf(edge.from))) < TIERS.indexOf(tierOf(areaOf(edge.to))))
    .map((edge) => `${named(edge)}: ${tierOf(areaOf(edge.from))} may not import ${tierOf(areaOf(edge.to))}`);
}

describe('service tiers', () => {
  const edges = serviceImports();

  test('the scanner reads the imports of services/', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.some((e) => areaOf(e.from) === 'publishing' && areaOf(e.to) === 'workflows')).toBe(true);
  });

  test('no import points from a lower tier to a higher one', () => {
    expect(upwardImports(edges)).toEqual([]);
  });

  test('no two areas import each other, directly or around a cycle', () => {
    expect(areaCycles(areaGraph(edges))).toEqual([]);
  });

  test('no runtime import cycle between files, not even inside an area', () => {
    const found = cycles(fileGraph(edges)).map(({ steps }) => steps.map(({ edge }) => named(edge)).join(' -> '));
    expect(found).toEqual([]);
  });

  test('every file belongs to an area: services/ holds no loose files', () => {
    const loose = readdirSync(servicesDir).filter((name) => name.endsWith('.ts'));
    expect(loose).toEqual([]);
  });

  test('index files name what they export (no `export *`)', () => {
    const wildcard = filesUnder(servicesDir).filter((file) => /^export \* from/m.test(readFileSync(file, 'utf8')));
    expect(wildcard.map((file) => path.relative(root, file))).toEqual([]);
  });

  test('file names are camelCase', () => {
    const kebab = filesUnder(servicesDir).filter((file) => path.basename(file).includes('-'));
    expect(kebab.map((file) => path.relative(root, file))).toEqual([]);
  });

  test('the checks catch a cycle and an upward import', () => {
    const probe: Edge[] = [
      { from: 'kernel/errors.ts', to: 'runs/execute.ts' },
      { from: 'runs/execute.ts', to: 'mailer/routes.ts' },
      { from: 'mailer/routes.ts', to: 'runs/views.ts' },
    ];
    expect(upwardImports(probe)).toEqual(['services/kernel/errors.ts imports services/runs/execute.ts: kernel may not import use case']);
    expect(areaCycles(areaGraph(probe))).toEqual([
      'areas mailer, runs import each other: mailer -> runs (services/mailer/routes.ts imports services/runs/views.ts); runs -> mailer (services/runs/execute.ts imports services/mailer/routes.ts)',
    ]);
  });
});
