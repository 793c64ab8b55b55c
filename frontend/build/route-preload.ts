// Which chunks each page needs beyond the entry, written by the build for the server that serves index.html: the
// server knows the address it answers and names that page's chunks in <link rel="modulepreload"> (and its style
// sheets in <link rel="preload" as="style">), so they load beside the entry script instead of once the entry has
// run and the router has matched the address (headroom.api.app; docs/operations.md, the page the API serves).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Plugin } from 'vite';

/** Where the table is written, beside Vite's manifest (.vite/ is never served). */
export const ROUTE_PRELOAD_FILE = '.vite/route-preload.json';

// The router files' route objects, read as tokens: an object literal's braces, its `path: '…'`, `index: true` and
// its `import('…')` (a page's lazyPage). Each object literal is a frame; a route's lazy modules are its own and its
// ancestors'.
const TOKEN =
  /(?<open>\{)|(?<close>\})|path:\s*'(?<path>[^']*)'|(?<index>index:\s*true)|import\(\s*'(?<module>[^']+)'\s*\)/g;

interface Frame {
  path: string | null;
  index: boolean;
  modules: string[];
  children: Frame[];
}

const newFrame = (): Frame => ({ path: null, index: false, modules: [], children: [] });

/** The file (relative to `root`, with `/`) a router file's `import('…')` names: `@/x` is src/x. */
function resolveModule(root: string, spec: string, importer: string): string {
  const base = spec.startsWith('@/') ? join(root, 'src', spec.slice(2)) : resolve(dirname(importer), spec);
  for (const suffix of ['', '.tsx', '.ts', '/index.tsx', '/index.ts']) {
    const candidate = base + suffix;
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate).split(sep).join('/');
  }
  throw new Error(`cannot resolve ${spec} imported by ${importer}`);
}

/** Each page path of the router files with the lazy page modules it and its ancestors import (the first
 * declaration of a path wins, as in the router, but for an index route, whose page is its parent's). */
export function routeModules(root: string, routerFiles: string[]): Record<string, string[]> {
  const routes: Record<string, string[]> = {};
  for (const file of routerFiles) {
    const stack: Frame[] = [newFrame()];
    for (const match of readFileSync(file, 'utf8').matchAll(TOKEN)) {
      const top = stack[stack.length - 1];
      const g = match.groups ?? {};
      if (g.open) {
        const frame = newFrame();
        top.children.push(frame);
        stack.push(frame);
      } else if (g.close) stack.pop();
      else if (g.path !== undefined) top.path = g.path;
      else if (g.index) top.index = true;
      else if (g.module) top.modules.push(resolveModule(root, g.module, file));
    }
    const walk = (frame: Frame, parent: string, inherited: string[]) => {
      const { path } = frame;
      const here = path === null ? parent : path.startsWith('/') ? path : `${parent}/${path}`;
      const modules = [...inherited, ...frame.modules];
      // an index route's page is the one shown at its parent's address
      if (frame.index) routes[here || '/'] = modules;
      else if (path !== null && path !== '*') routes[here || '/'] ??= modules;
      for (const child of frame.children) walk(child, here, modules);
    };
    walk(stack[0], '', []);
  }
  return routes;
}

export interface RoutePreload {
  /** The page modules the route imports lazily (keys of Vite's manifest). */
  modules: string[];
  /** Their chunks and every chunk those import statically, less what the entry loads already, page first. */
  js: string[];
  /** The style sheets of those chunks. */
  css: string[];
}

interface Chunk {
  type: 'chunk';
  fileName: string;
  facadeModuleId: string | null;
  isEntry: boolean;
  imports: string[];
  viteMetadata?: { importedCss: Set<string> };
}

/** The build's table: for each page path of `routerFiles`, the chunks its first load needs beyond the entry. */
export function routePreload(routerFiles: string[]): Plugin {
  let root = '';
  return {
    name: 'headroom-route-preload',
    apply: 'build',
    configResolved(config) {
      root = config.root;
    },
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((item): item is typeof item & Chunk => item.type === 'chunk');
      const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
      const byModule = new Map(
        chunks
          .filter((chunk) => chunk.facadeModuleId !== null)
          .map((chunk) => [relative(root, chunk.facadeModuleId ?? '').split(sep).join('/'), chunk]),
      );
      const closure = (files: string[]) => {
        const seen = new Set<string>();
        const visit = (file: string) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const imported of byFile.get(file)?.imports ?? []) visit(imported);
        };
        files.forEach(visit);
        return [...seen];
      };
      const entry = new Set(closure(chunks.filter((chunk) => chunk.isEntry).map((chunk) => chunk.fileName)));
      const routes: Record<string, RoutePreload> = {};
      for (const [path, modules] of Object.entries(routeModules(root, routerFiles))) {
        const pages = modules.map((module) => {
          const chunk = byModule.get(module);
          if (!chunk) throw new Error(`${path}: the build has no chunk for its page module ${module}`);
          return chunk.fileName;
        });
        const js = closure(pages).filter((file) => !entry.has(file));
        const css = [...new Set(js.flatMap((file) => [...(byFile.get(file)?.viteMetadata?.importedCss ?? [])]))];
        routes[path] = { modules, js, css };
      }
      this.emitFile({
        type: 'asset',
        fileName: ROUTE_PRELOAD_FILE,
        source: `${JSON.stringify({ routes }, null, 2)}\n`,
      });
    },
  };
}
