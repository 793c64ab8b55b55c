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
  });

  await test.step('a malformed role ARN is refused in words beside the field, and nothing is saved', async () => {
    await page.getByLabel('Name', { exact: true }).fill('typo-account');
    await page.getByLabel('Role ARN').fill('arn:aws:iam::1234:role/HeadroomReadOnly');
    await page.getByRole('button', { name: 'Connect AWS account' }).click();
    const arn = page.getByLabel('Role ARN');
    await expect(arn).toHaveAttribute('aria-invalid', 'true');
    await expect(arn).toHaveAccessibleDescription(
      'Expected an IAM role ARN like arn:aws:iam::123456789012:role/HeadroomReadOnly (arn:aws:iam::, the 12-digit ' +
        "account ID, :role/ and the role's name)",
    );
    await expect(page.getByText(/Expected an IAM role ARN/)).toHaveCount(1);
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(page.locator('body')).not.toContainText('should match pattern');
    await expect(page).toHaveURL(/\/settings\/sources\/aws\/new$/);
    await attachScreenshot('connect-aws-malformed-arn');
    await page.getByRole('link', { name: '← Data sources' }).click();
    await expect(sources.heading()).toBeVisible();
  });

  await test.step('nothing was saved by the refused ARN', async () => {
    await expect(page.getByRole('region', { name: 'No AWS accounts connected' })).toBeVisible();
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
    await expect(prometheus.testMessages()).toContainText(/could not reach|could not connect|refused|did not answer in time/i);
    await attachScreenshot('prometheus-test-failed');
  });

  await test.step('the sources list shows the failed check with its reason', async () => {
    await prometheus.backToSources();
    const row = sources.prometheusRow('unreachable-prom');
    await expect(row.getByText('Last check failed')).toBeVisible();
    await expect(row.getByText(/could not reach|could not connect|refused|did not answer in time/i)).toBeVisible();
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

test('settings: the demo organisation has an AWS source that shows what a healthy one looks like, marked demo', async ({
  page,
  signInAsDemo,
}, testInfo) => {
  // A fresh server records the demo source's first (import) sweep with the demo fleet's first ingest.
  test.setTimeout(240_000);
  const sources = new SettingsSourcesPage(page);
  const attachScreenshot = async (name: string) => {
    const shot = testInfo.outputPath(`${name}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach(name, { path: shot, contentType: 'image/png' });
  };

  await test.step('log in to the demo organisation and open Data sources', async () => {
    await signInAsDemo();
    // The clusters list shows each cluster's health: its open findings by severity (the fleet view's numbers).
    const demoCluster = page.getByRole('row', { name: /demo-prod \(demo\)/ });
    await expect(demoCluster).toContainText(/\d+ critical, \d+ warning, \d+ info/);
    await attachScreenshot('demo-clusters-list');
    await sources.openFromMainNav();
  });

  await test.step('the list shows the demo source, healthy and labelled as a demo', async () => {
    const row = page.getByRole('table', { name: 'AWS connections' }).getByRole('row', { name: /Demo AWS account/ });
    await expect(row.getByText('Demo', { exact: true })).toBeVisible();
    await expect(row).toContainText('Simulated (demo)');
    await expect(async () => {
      await page.reload();
      await expect(row.getByText('Healthy')).toBeVisible({ timeout: 2_000 });
    }).toPass({ timeout: 180_000 });
    await row.getByRole('link', { name: 'Demo AWS account' }).click();
  });

  await test.step('its page: the note, the import, the sweeps with their CloudWatch cost, a passing test', async () => {
    await expect(page.getByRole('heading', { name: 'Demo AWS account', level: 1 })).toBeVisible();
    await expect(page.getByRole('note')).toContainText('This source is simulated');
    await expect(page.getByText('Done', { exact: true })).toBeVisible();
    await expect(page.getByRole('button', { name: /Import history/ })).toHaveCount(0);
    const sweeps = page.getByRole('table', { name: /sweeps/i });
    await expect(sweeps.getByRole('row').nth(1)).toBeVisible();
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.getByRole('region', { name: 'Test result' });
    await expect(result).toContainText('Demo source: every check passes without calling AWS');
    await expect(result.getByText('Pass', { exact: true })).toHaveCount(5);
    await attachScreenshot('demo-aws-source');
  });
});
