/// <reference types="vitest/config" />
import { fileURLToPath, URL } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The backend serves frontend/dist at / on the same origin as the API; in development
// the Vite server stands in for it and forwards /api to the backend.
const apiTarget = process.env.HEADROOM_API_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
  build: {
    outDir: 'dist',
    // No source maps in the build: served, they would publish the whole front-end source (the dev server
    // still gives them to the browser's tools).
    sourcemap: false,
  },
  test: {
    css: false,
    restoreMocks: true,
    // The machines have 2 shared cores; under a full test run a first Recharts render or a typed form
    // can take several seconds, far past the 5 s default.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'app', environment: 'jsdom', setupFiles: ['./src/test/setup.ts'], include: ['src/**/*.test.{ts,tsx}'] },
      },
      // The lint rules' own tests run ESLint in Node, without the browser stand-ins.
      { extends: true, test: { name: 'eslint-rules', environment: 'node', include: ['eslint-rules/**/*.test.ts'] } },
    ],
  },
});
