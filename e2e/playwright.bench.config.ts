import { defineConfig } from '@playwright/test';
import base from './playwright.config';

// The front end's benchmarks (bench/page_times.py runs them): the same browser and server as the e2e tests,
// specs under bench/ so `scripts/e2e.sh` never runs them.
export default defineConfig({ ...base, testDir: './bench', outputDir: './test-results-bench' });
