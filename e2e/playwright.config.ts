import { defineConfig, devices } from '@playwright/test';

// The server under test is started by whoever runs this (scripts/test.sh starts one on a test database);
// Playwright never starts or downloads anything itself. Chromium is Debian's.
const baseURL = process.env.HEADROOM_E2E_BASE_URL ?? 'http://127.0.0.1:8000';
const executablePath = process.env.HEADROOM_E2E_CHROMIUM ?? '/usr/bin/chromium';
const ci = !!process.env.CI;

// The specs that change the demo organisation other specs read: the apply specs turn apply on and point the demo's
// nodes at the TiKV stand-ins and its gp2 volumes at volumes in moto, until they put them back; cluster.spec.ts
// marks a patch applied. They are the "demo-changes" project and run one at a time; the rest read the demo as it is or work in a
// fresh organisation of their own, so they run side by side ("shared").
const DEMO_CHANGES = /\/(apply|apply-ebs|cluster)\.spec\.ts$/;

const chromium = {
  ...devices['Desktop Chrome'],
  viewport: { width: 1280, height: 800 },
  launchOptions: {
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  },
};

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  fullyParallel: false,
  // Two browsers beside the server: the 2-core CI machine's size (bench/ci_time.md has the timings).
  workers: 2,
  forbidOnly: ci,
  // In CI, a spec that fails is run once more, and the report lists it as flaky (the note of the run says which).
  // The specs run beside pytest or the front end's checks on 2 cores, and on a slow hour of the machine a page
  // under load outlasts a timeout (bench/ci_time.md, "Seventh pass"); a spec that fails twice fails the run.
  retries: ci ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL,
    headless: true,
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    // Pages as a user who asked for reduced motion sees them: the loading spinner stands still. A turning spinner
    // kept headless Chromium redrawing at 7-11 s of CPU a minute, against 3-4 s for a still page (bench/ci_time.md),
    // on a 2-core machine where every spec waits for pages that load.
    reducedMotion: 'reduce',
    timezoneId: 'UTC',
    // A trace records DOM snapshots and a screencast of every action of every test, passing or not: a quarter of the
    // `shared` project's CPU (199 against 265 CPU s, 133 against 162 s, bench/ci_time.md "Tenth pass"). In CI a
    // failed test is run again with a trace (the first attempt keeps its screenshot and error context); run by hand,
    // without retries, a failing test keeps the trace it recorded.
    trace: ci ? 'on-first-retry' : 'retain-on-failure',
    screenshot: 'only-on-failure',
    actionTimeout: 10_000,
    navigationTimeout: 20_000,
  },
  projects: [
    { name: 'demo-changes', testMatch: DEMO_CHANGES, workers: 1, use: chromium },
    {
      name: 'shared',
      testIgnore: DEMO_CHANGES,
      // After the demo's changes are put back, on one server; scripts/test.sh runs the two projects apart (--no-deps),
      // each against a server with a demo of its own.
      dependencies: ['demo-changes'],
      // Each test signs in or signs up on its own, so the tests of one file may run on different workers too.
      fullyParallel: true,
      use: chromium,
    },
  ],
});
