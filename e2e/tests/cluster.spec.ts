import { readFileSync } from 'node:fs';
import { expect, test } from '../fixtures';
import { DEMO_CLUSTER } from '../pages/ClusterPage';

test('demo org: open the cluster, see findings, open one, patch it and download the toml', async ({
  page,
  loginPage,
  clusterPage,
  demoLogin,
}, testInfo) => {
  // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
  test.setTimeout(240_000);

  await test.step('log in to the demo organisation', async () => {
    await loginPage.goto();
    await loginPage.logIn(demoLogin.email, demoLogin.password);
    await expect(page.getByRole('heading', { name: 'Clusters', level: 1 })).toBeVisible();
  });

  await test.step('open the demo cluster from the clusters list', async () => {
    await page.getByRole('row', { name: new RegExp(DEMO_CLUSTER.replace(/[()]/g, '\\$&')) }).getByRole('link').click();
    await expect(clusterPage.heading(DEMO_CLUSTER)).toBeVisible();
    await expect(page).toHaveURL(/\/clusters\/[0-9a-f-]{36}$/);
    await expect(clusterPage.sourceHealth()).toContainText('Demo');
    await expect(clusterPage.severityCounts()).toBeVisible();
  });

  await test.step('see the findings the advisor made', async () => {
    await clusterPage.openTab('Findings');
    await expect(page).toHaveURL(/\/findings$/);
    await clusterPage.waitForFindings(180_000);
    expect(await clusterPage.findingLinks().count()).toBeGreaterThan(0);
  });

  await test.step('the overview counts them by severity and lists the nodes with instance and volumes', async () => {
    await clusterPage.openTab('Overview');
    const counts = clusterPage.severityCounts();
    await expect(counts).toBeVisible();
    await expect(counts.getByText(/^[1-9]\d*$/).first()).toBeVisible();
    await expect(clusterPage.nodesTable().getByRole('row')).not.toHaveCount(1);
    await expect(clusterPage.nodesTable()).toContainText('GiB');
    const shot = testInfo.outputPath('cluster-overview.png');
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach('cluster-overview', { path: shot, contentType: 'image/png' });
  });

  await test.step('open one finding: evidence with units and the sources of its limits', async () => {
    await clusterPage.openTab('Findings');
    const first = clusterPage.findingLinks().first();
    const title = (await first.textContent()) ?? '';
    await first.click();
    await expect(page.getByRole('heading', { name: title, level: 2 })).toBeVisible();
    await expect(clusterPage.evidence()).toBeVisible();
    await expect(clusterPage.measures()).toContainText(/IOPS|MiB\/s|%|GiB|min/);
    // Each limit says where it comes from: a public page (a link) or "measured"; never a private shorthand.
    await expect(
      clusterPage.measures().locator('a.source-link[href^="https://"]').or(clusterPage.measures().getByText('measured')).first(),
    ).toBeVisible();
    await expect(clusterPage.measures()).not.toContainText(/domain\.md|seed 0\d\d|issue \d/);
    // The demo user owns the org, so the finding's actions are offered.
    await expect(page.getByRole('button', { name: 'Acknowledge' })).toBeEnabled();
  });

  await test.step('pick a finding that changes tikv.toml, create a patch and see its diff', async () => {
    await clusterPage.openTab('Config');
    await clusterPage.findingToInclude(/block cache|rate-bytes-per-sec/).first().check();
    await expect(page.getByRole('status').filter({ hasText: /tikv\.toml change/ })).toContainText(/[1-9]\d* tikv\.toml change/);
    await clusterPage.createPatchButton().click();
    await expect(page.getByRole('heading', { name: 'Patch created' })).toBeVisible();
    await expect(clusterPage.diff()).toContainText(/^\+\S+ = /m);
  });

  await test.step('download the patch as tikv.toml', async () => {
    const download = await clusterPage.download('toml');
    expect(download.suggestedFilename()).toMatch(/\.toml$/);
    const path = testInfo.outputPath(download.suggestedFilename());
    await download.saveAs(path);
    const toml = readFileSync(path, 'utf8');
    expect(toml).toContain('# Headroom patch for cluster');
    expect(toml).toMatch(/^\[(storage\.block-cache|rocksdb)\]$/m);
  });

  await test.step('download the undo as its own tikv.toml: the values before the patch, TOML again', async () => {
    await clusterPage.rollbackToggle().check();
    const download = await clusterPage.download('toml rollback');
    expect(download.suggestedFilename()).toMatch(/-rollback-tikv-patch\.toml$/);
    const path = testInfo.outputPath(download.suggestedFilename());
    await download.saveAs(path);
    const toml = readFileSync(path, 'utf8');
    expect(toml).toContain('# Rollback of the Headroom patch for cluster');
    expect(toml).toMatch(/^\[(storage\.block-cache|rocksdb)\]$/m);
    expect(toml).not.toContain('=====');
    await clusterPage.rollbackToggle().uncheck();
  });

  await test.step('the patch is listed and can be marked applied', async () => {
    await clusterPage.openTab('Patches');
    await page.getByRole('table', { name: 'Patches' }).getByRole('link').first().click();
    await page.getByRole('button', { name: 'Mark applied' }).click();
    await expect(page.getByText(/^Applied .* by Demo User$/)).toBeVisible();
  });
});
