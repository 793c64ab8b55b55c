import { defineConfig } from '@playwright/test';
import base from './playwright.config';

// The front end's benchmarks (bench/page_times.py runs them): the same browser and server as the e2e tests,
// specs under bench/ so `scripts/e2e.sh` never runs them. One worker and one project: a timing taken beside
// another browser's loads would measure both.
export default defineConfig({
  ...base,
  testDir: './bench',
  outputDir: './test-results-bench',
  workers: 1,
  fullyParallel: false,
  projects: [{ name: 'bench', use: base.projects?.find((p) => p.name === 'shared')?.use ?? base.use }],
});
