import { beforeAll, describe, expect, it } from 'vitest';
import type { RouteObject } from 'react-router';
import { routes } from '@/router';

// frontend/route-paths.json lists every page path of the router, for the backend's tests: every link in the
// weekly email must open one of them (backend/tests/digest/test_links.py). This test keeps the file true.
interface Fs {
  readFileSync(path: string, encoding: 'utf8'): string;
}
let recorded: { paths: string[] } = { paths: [] };
beforeAll(async () => {
  // The app's tsconfig has no Node types, hence the untyped import; Vitest runs in frontend/.
  const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
  const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
  recorded = JSON.parse(fs.readFileSync(`${cwd}/route-paths.json`, 'utf8')) as { paths: string[] };
});

function pagePaths(tree: RouteObject[], parent = ''): string[] {
  return tree.flatMap((route) => {
    const here = route.path === undefined ? parent : route.path.startsWith('/') ? route.path : `${parent}/${route.path}`;
    const own = (route.path !== undefined || route.index) && route.path !== '*' ? [here || '/'] : [];
    return [...own, ...pagePaths(route.children ?? [], here)];
  });
}

describe('route-paths.json', () => {
  it("lists exactly the router's page paths (regenerate it from the failure's list when routes change)", () => {
    const actual = [...new Set(pagePaths(routes))].sort();
    expect(actual).toContain('/clusters/:clusterId/findings/:findingId');
    expect(actual).toContain('/unsubscribe');
    expect(recorded.paths).toEqual(actual);
  });
});
