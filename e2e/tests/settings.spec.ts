import { createServer } from 'node:net';
import { expect, test } from '../fixtures';
import { SettingsPrometheusPage } from '../pages/SettingsPrometheusPage';
import { SettingsSourcesPage } from '../pages/SettingsSourcesPage';
import { SettingsTokensPage } from '../pages/SettingsTokensPage';

/** A 127.0.0.1 port nothing listens on: bind an ephemeral port, then close it. */
async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

test('settings: an unreachable Prometheus is reported with its reason; an API token is shown once', async ({
  page,
  request,
  signupPage,
  clustersPage,
  newAccount,
  outbox,
}, testInfo) => {
  const sources = new SettingsSourcesPage(page);
  const prometheus = new SettingsPrometheusPage(page);
  const tokens = new SettingsTokensPage(page);
  const port = await closedPort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // Kept under test-results/ for a person to look at.
  const attachScreenshot = async (name: string) => {
    const shot = testInfo.outputPath(`${name}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach(name, { path: shot, contentType: 'image/png' });
  };

  await test.step('sign up a fresh organisation and open Settings', async () => {
    await signupPage.goto();
    await signupPage.signUp(newAccount);
    await expect(signupPage.checkYourEmail()).toBeVisible();
    await signupPage.followEmailedLink(await outbox.signupLink(newAccount.email));
    await expect(clustersPage.heading()).toBeVisible();
    await sources.openFromMainNav();
    await expect(page).toHaveURL(/\/settings\/sources$/);
    await expect(page.getByRole('region', { name: 'No Prometheus sources' })).toBeVisible();
  });

  await test.step('the Connect AWS page shows the organisation\'s external ID inside the trust policy', async () => {
    await sources.startConnectingAws();
    const externalId = (await sources.externalId().textContent())?.trim() ?? '';
    expect(externalId.length).toBeGreaterThan(8);
    const trust = JSON.parse((await sources.trustPolicy().textContent()) ?? '{}');
    expect(trust.Statement[0].Condition.StringEquals['sts:ExternalId']).toBe(externalId);
    await attachScreenshot('connect-aws');
    await page.getByRole('link', { name: '← Data sources' }).click();
    await expect(sources.heading()).toBeVisible();
  });

  await test.step('connect a Prometheus on a closed port', async () => {
    await sources.startAddingPrometheus();
    await prometheus.add({ name: 'unreachable-prom', baseUrl, style: 'tiup' });
    await expect(prometheus.heading('unreachable-prom')).toBeVisible();
    await expect(page).toHaveURL(/\/settings\/sources\/prometheus\/[0-9a-f-]{36}$/);
  });

  await test.step('test the connection: not reachable, with the reason', async () => {
    await prometheus.testConnection();
    await expect(prometheus.testResult()).toContainText('Prometheus is not reachable.');
    await expect(prometheus.testMessages()).toContainText(`127.0.0.1:${port}`);
    await expect(prometheus.testMessages()).toContainText(/cannot reach|refused|timed out/i);
    await attachScreenshot('prometheus-test-failed');
  });

  await test.step('the sources list shows the failed check with its reason', async () => {
    await prometheus.backToSources();
    const row = sources.prometheusRow('unreachable-prom');
    await expect(row.getByText('Last check failed')).toBeVisible();
    await expect(row.getByText(/cannot reach|refused|timed out/i)).toBeVisible();
    await expect(row).toContainText('Last success: —');
  });

  await test.step('after three failures in a row it is unhealthy', async () => {
    // The API flips a source to failing after 3 consecutive failures (sources/health.py FAILING_AFTER).
    await sources.prometheusRow('unreachable-prom').getByRole('link', { name: 'unreachable-prom' }).click();
    for (let attempt = 2; attempt <= 3; attempt += 1) {
      await prometheus.testConnection();
      await expect(page.getByText(`(${attempt} failures in a row)`)).toBeVisible();
    }
    await prometheus.backToSources();
    const row = sources.prometheusRow('unreachable-prom');
    await expect(row.getByText('Unhealthy')).toBeVisible();
    await expect(row).toContainText('(3 failures in a row)');
  });

  await test.step('create an API token and see it exactly once', async () => {
    await sources.goTo('API tokens');
    await expect(tokens.heading()).toBeVisible();
    await expect(page.getByRole('region', { name: 'No API tokens' })).toBeVisible();
    await tokens.create('e2e-ci');
    await expect(tokens.tokenValue()).toBeVisible();
    const value = (await tokens.tokenValue().textContent())?.trim() ?? '';
    expect(value.length).toBeGreaterThan(20);
    await expect(tokens.copyButton()).toBeVisible();
    const row = tokens.row('e2e-ci');
    await expect(row).toBeVisible();
    const prefix = value.slice(0, 10);
    await expect(row).toContainText(`${prefix}…`);
    await expect(row).not.toContainText(value);
    await attachScreenshot('api-token-shown-once');

    // The token works as a bearer credential on its own (`request` carries no session cookie).
    const withToken = await request.get('/api/v1/clusters', { headers: { Authorization: `Bearer ${value}` } });
    expect(withToken.status()).toBe(200);
    const without = await request.get('/api/v1/clusters');
    expect(without.status()).toBe(401);

    await page.reload();
    await expect(tokens.heading()).toBeVisible();
    await expect(tokens.row('e2e-ci')).toContainText(`${prefix}…`);
    await expect(tokens.newToken()).toHaveCount(0);
    await expect(page.locator('body')).not.toContainText(value);
  });
});
