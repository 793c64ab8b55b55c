import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';
import { afterEach, describe, expect, it } from 'vitest';
import { ROUTE_PRELOAD_FILE, routeModules, routePreload, type RoutePreload } from './route-preload';

const FRONTEND = dirname(dirname(fileURLToPath(import.meta.url)));
const ROUTER_FILES = ['src/router.tsx', 'src/routes/settings-routes.tsx'].map((file) => join(FRONTEND, file));

let scratch = '';
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = '';
});

/** A throw-away project: `files` by path, written under a new temporary folder (its root). */
function project(files: Record<string, string>) {
  scratch = mkdtempSync(join(tmpdir(), 'route-preload-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), text);
  }
  return scratch;
}

describe('routeModules on the app router', () => {
  const table = routeModules(FRONTEND, ROUTER_FILES);

  it('has every page path of route-paths.json (the router itself, src/route-paths.test.ts) and no other', () => {
    const recorded = JSON.parse(readFileSync(join(FRONTEND, 'route-paths.json'), 'utf8')) as { paths: string[] };
    expect(Object.keys(table).sort()).toEqual(recorded.paths);
  });

  it("names each page's module, the cluster overview's (an index route) at its layout's address", () => {
    expect(table['/clusters/:clusterId']).toEqual(['src/routes/cluster-overview.tsx']);
    expect(table['/clusters/:clusterId/metrics']).toEqual(['src/routes/cluster-metrics.tsx']);
    expect(table['/settings/sources/aws/new']).toEqual(['src/routes/settings-aws-new.tsx']);
    expect(table['/settings/sources/aws/:connectionId']).toEqual(['src/routes/settings-aws.tsx']);
    expect(table['/']).toEqual([]); // a redirect
  });
});

describe('routeModules', () => {
  it('joins nested paths, resolves @/ and relative imports, keeps the first declaration of a path', () => {
    const root = project({
      'src/routes/a.tsx': '',
      'src/routes/b.ts': '',
      'src/routes/c/index.tsx': '',
      'src/routes/d.tsx': '',
      'src/router.tsx': `export const routes = [
        { path: '/a', lazy: lazyPage(() => import('@/routes/a')), handle: { prefetch: () => { void 0; } } },
        { path: '/x/:id', children: [
          { index: true, lazy: lazyPage(() => import('./routes/c')) },
          { path: 'b', lazy: lazyPage(() => import('@/routes/b')) },
        ] },
        { path: '/a', lazy: lazyPage(() => import('@/routes/d')) },
        { path: '*', lazy: lazyPage(() => import('@/routes/d')) },
      ];`,
    });
    expect(routeModules(root, [join(root, 'src/router.tsx')])).toEqual({
      '/a': ['src/routes/a.tsx'],
      '/x/:id': ['src/routes/c/index.tsx'],
      '/x/:id/b': ['src/routes/b.ts'],
    });
  });

  it('fails on an import it cannot find', () => {
    const root = project({ 'src/router.tsx': "[{ path: '/a', lazy: () => import('@/routes/gone') }]" });
    expect(() => routeModules(root, [join(root, 'src/router.tsx')])).toThrow(/cannot resolve @\/routes\/gone/);
  });
});

describe('routePreload in a build', () => {
  it("lists a page's chunk and the chunks it imports, not the entry's", async () => {
    const root = project({
      'index.html': '<!doctype html><html><head></head><body><script type="module" src="/src/main.ts"></script></body></html>',
      'src/main.ts': "import { shared } from './entry-lib';\nexport const routes = [{ path: '/p', lazy: () => import('./routes/p') }, { path: '/q', lazy: () => import('./routes/q') }];\nconsole.log(shared, routes);\n",
      'src/entry-lib.ts': "export const shared = 'in the entry';\n",
      'src/routes/p.ts': "import { shared } from '../entry-lib';\nimport { both } from '../both';\nimport './p.css';\nexport default () => shared + both + 'p';\n",
      'src/routes/q.ts': "import { both } from '../both';\nexport default () => both + 'q';\n",
      'src/routes/p.css': 'body { color: red; }\n',
      'src/both.ts': "export const both = 'in p and q, '.repeat(50);\n",
    });
    const output = (await build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [routePreload([join(root, 'src/main.ts')])],
      build: { write: false, minify: false },
    })) as Rollup.RollupOutput;
    const asset = output.output.find((item) => item.fileName === ROUTE_PRELOAD_FILE);
    expect(asset?.type).toBe('asset');
    const { routes } = JSON.parse(String((asset as Rollup.OutputAsset).source)) as { routes: Record<string, RoutePreload> };
    const chunkOf = (module: string) =>
      output.output.find((item) => item.type === 'chunk' && item.facadeModuleId === join(root, module))?.fileName;
    const entry = output.output.find((item) => item.type === 'chunk' && item.isEntry)?.fileName;
    expect(routes['/p'].modules).toEqual(['src/routes/p.ts']);
    expect(routes['/p'].js[0]).toBe(chunkOf('src/routes/p.ts'));
    expect(routes['/p'].js).toHaveLength(2); // the page and the chunk it shares with q
    expect(routes['/q'].js).toEqual([chunkOf('src/routes/q.ts'), routes['/p'].js[1]]);
    expect(routes['/p'].js).not.toContain(entry);
    expect(routes['/p'].css).toEqual([expect.stringMatching(/^assets\/p-.*\.css$/)]);
    expect(routes['/q'].css).toEqual([]);
  });
});
