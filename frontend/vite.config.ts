/// <reference types="vitest/config" />
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { routePreload } from './build/route-preload.ts';

// Text files worth compressing; fonts and images come compressed already.
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt)$/;

/** Writes a .gz and a .br beside each text file of the build, once, at build time: the backend serves them to
 * browsers that accept them (headroom.api.app._mount_frontend), and nginx's gzip_static serves the .gz. */
function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'headroom-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const walk = (dir: string): string[] =>
        readdirSync(dir).flatMap((name) => {
          const path = join(dir, name);
          if (name.startsWith('.')) return []; // .vite/manifest.json is for the build tools, never served
          return statSync(path).isDirectory() ? walk(path) : [path];
        });
      for (const file of walk(outDir).filter((path) => COMPRESSIBLE.test(path))) {
        const bytes = readFileSync(file);
        const variants: [string, Buffer][] = [
          ['gz', gzipSync(bytes, { level: 9 })],
          ['br', brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } })],
        ];
        // A file too small to gain (a tiny icon) stays as it is.
        for (const [suffix, packed] of variants) if (packed.length < bytes.length) writeFileSync(`${file}.${suffix}`, packed);
      }
    },
  };
}

/** `import x from 'page.md?title'`: the page's first "# " heading as a string, read at build time, so that a
 * module that needs only the titles of the "How Headroom decides" pages (src/lib/decides.ts) does not carry them. */
function markdownTitle(): Plugin {
  return {
    name: 'headroom-markdown-title',
    enforce: 'pre',
    load(id) {
      const [file, query] = id.split('?');
      if (query !== 'title' || !file?.endsWith('.md')) return null;
      const heading = readFileSync(file, 'utf8').split('\n').find((line) => line.startsWith('# '));
      return `export default ${JSON.stringify(heading ? heading.slice(2).trim() : '')};`;
    },
  };
}

/** src/boot.ts (the page's first requests, src/first-requests.ts) as an entry of its own, which index.html loads with
 * `async` before the app's entry, and its imports preloaded: it runs as soon as it has arrived, not once the app's
 * code has arrived and run. (Every <script type="module"> of index.html would be bundled into the one app entry.) */
function firstRequestsScript(): Plugin {
  return {
    name: 'headroom-first-requests',
    apply: 'build',
    config() {
      const file = (name: string) => fileURLToPath(new URL(name, import.meta.url));
      return { build: { rolldownOptions: { input: { index: file('./index.html'), boot: file('./src/boot.ts') } } } };
    },
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const boot = Object.values(ctx.bundle ?? {}).find((out) => out.type === 'chunk' && out.isEntry && out.name === 'boot');
        if (boot?.type !== 'chunk') throw new Error('the build has no boot entry (src/boot.ts)');
        // First in the head after the charset, so the browser asks for it first; its imports too, unless the app's
        // entry preloads them already.
        const tags = [
          `<script type="module" async crossorigin src="/${boot.fileName}"></script>`,
          ...boot.imports.filter((file) => !html.includes(`/${file}"`)).map((file) => `<link rel="modulepreload" crossorigin href="/${file}">`),
        ];
        const charset = /<meta charset="[^"]*"\s*\/?>/i;
        if (!charset.test(html)) throw new Error('index.html has no <meta charset> to put the first-requests script after');
        return html.replace(charset, (meta) => [meta, ...tags].join('\n    '));
      },
    },
  };
}

// The backend serves frontend/dist at / on the same origin as the API; in development
// the Vite server stands in for it and forwards /api to the backend.
const apiTarget = process.env.HEADROOM_API_URL ?? 'http://127.0.0.1:8000';

// The files that declare the router's pages (lazyPage imports), read by the build for its route preload table.
const ROUTER_FILES = ['src/router.tsx', 'src/routes/settings-routes.tsx'];

export default defineConfig({
  plugins: [markdownTitle(), react(), firstRequestsScript(), routePreload(ROUTER_FILES.map((file) => fileURLToPath(new URL(file, import.meta.url)))), precompress()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
    // The "How Headroom decides" pages are bundled from the repository's docs/thresholds (src/lib/decides.ts).
    fs: { allow: ['.', '../docs/thresholds'] },
  },
  build: {
    outDir: 'dist',
    // No source maps in the build: served, they would publish the whole front-end source (the dev server
    // still gives them to the browser's tools).
    sourcemap: false,
    // .vite/manifest.json: which chunks each page loads first, read by bench/frontend_budget.py.
    manifest: true,
  },
  test: {
    css: false,
    restoreMocks: true,
    // The machines have 2 shared cores; under a full test run a first Recharts render or a typed form
    // can take several seconds, far past the 5 s default.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Test files share their worker's module graph and jsdom instead of building both afresh per file: a third of
    // the CPU (bench/ci_time.md, "Sixth pass"). What a test changes is put back after it (src/test/setup.ts:
    // unmount, the request handlers; restoreMocks), and a test that needs modules loaded afresh resets them itself.
    isolate: false,
    projects: [
      {
        extends: true,
        test: { name: 'app', environment: 'jsdom', setupFiles: ['./src/test/setup.ts'], include: ['src/**/*.test.{ts,tsx}'] },
      },
      // The lint rules' own tests run ESLint in Node, without the browser stand-ins.
      { extends: true, test: { name: 'eslint-rules', environment: 'node', include: ['eslint-rules/**/*.test.ts'] } },
      // The build's own plugins, in Node too.
      { extends: true, test: { name: 'build', environment: 'node', include: ['build/**/*.test.ts'] } },
    ],
  },
});
