import { expect, test } from '../fixtures';

test('sign up, see the empty clusters page, log out, log back in', async ({
  page,
  signupPage,
  loginPage,
  shell,
  clustersPage,
  newAccount,
  outbox,
}, testInfo) => {
  await test.step('a signed-out visitor is sent to the log-in page', async () => {
    await page.goto('/clusters');
    await expect(loginPage.heading()).toBeVisible();
    await expect(page).toHaveURL(/\/login\?next=%2Fclusters$/);
  });

  await test.step('a .test address is refused once, in words, beside the Email field', async () => {
    await signupPage.goto();
    await signupPage.signUp({ ...newAccount, email: 'someone@headroom.test' });
    const email = page.getByLabel('Email');
    await expect(email).toHaveAttribute('aria-invalid', 'true');
    await expect(email).toHaveAccessibleDescription(
      'Not a valid email address: headroom.test is a special-use domain (like .test, .invalid, .local or localhost: ' +
        'RFC 6761) that can never receive email; use an address at a real domain',
    );
    await expect(email).toBeFocused();
    // Once: no banner repeating it, and not the validator's raw sentence.
    await expect(page.getByText(/special-use domain/)).toHaveCount(1);
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(page.locator('body')).not.toContainText('value is not a valid email address');
    const shot = testInfo.outputPath('signup-test-domain.png');
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach('signup-test-domain', { path: shot, contentType: 'image/png' });
  });

  await test.step('sign up a fresh account and follow the emailed link', async () => {
    await signupPage.goto();
    await signupPage.signUp(newAccount);
    await expect(signupPage.checkYourEmail()).toBeVisible();
    await signupPage.followEmailedLink(await outbox.signupLink(newAccount.email));
  });

  await test.step('land on the empty clusters page inside the app shell', async () => {
    await expect(clustersPage.heading()).toBeVisible();
    await expect(page).toHaveURL(/\/clusters$/);
    await expect(clustersPage.emptyStateHint()).toBeVisible();
    // ... with the way to connect what it asks for.
    const empty = page.getByRole('region', { name: 'No clusters yet' });
    await expect(empty.getByRole('link', { name: 'Connect AWS account' })).toHaveAttribute('href', '/settings/sources/aws/new');
    await expect(empty.getByRole('link', { name: 'Add Prometheus source' })).toBeVisible();
    await expect(shell.mainNav()).toBeVisible();
    await expect(shell.organisation(newAccount.organisation)).toBeVisible();
    // Its name is the text it shows (WCAG 2.5.3), and it opens a menu.
    await expect(shell.accountMenuButton()).toHaveAccessibleName(newAccount.fullName);
    await expect(shell.accountMenuButton()).toHaveAttribute('aria-haspopup', 'menu');
    // Kept under test-results/ for a person to look at (the page as a signed-in user first sees it).
    const shot = testInfo.outputPath('clusters-empty.png');
    await page.screenshot({ path: shot, fullPage: true });
    await testInfo.attach('clusters-empty', { path: shot, contentType: 'image/png' });
  });

  await test.step('log out', async () => {
    await shell.logOut();
    await expect(loginPage.heading()).toBeVisible();
    await expect(page).toHaveURL(/\/login$/);
    // The session is really gone: a signed-in page sends us back to log in.
    await page.goto('/clusters');
    await expect(loginPage.heading()).toBeVisible();
  });

  await test.step('a wrong password shows the API error', async () => {
    await loginPage.logIn(newAccount.email, `${newAccount.password}-wrong`);
    await expect(loginPage.formError()).toBeVisible();
    await expect(loginPage.formError()).not.toBeEmpty();
  });

  await test.step('log back in and see the empty clusters page again', async () => {
    await loginPage.logIn(newAccount.email, newAccount.password);
    await expect(clustersPage.heading()).toBeVisible();
    await expect(page).toHaveURL(/\/clusters$/);
    await expect(clustersPage.emptyStateHint()).toBeVisible();
    // ... with the way to connect what it asks for.
    const empty = page.getByRole('region', { name: 'No clusters yet' });
    await expect(empty.getByRole('link', { name: 'Connect AWS account' })).toHaveAttribute('href', '/settings/sources/aws/new');
    await expect(empty.getByRole('link', { name: 'Add Prometheus source' })).toBeVisible();
    await expect(shell.organisation(newAccount.organisation)).toBeVisible();
  });
});

test("a visitor's pages log no console error (no 401 from a session check)", async ({ page, loginPage, signupPage }) => {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  const failed: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });

  await loginPage.goto();
  await expect(loginPage.heading()).toBeVisible();
  await signupPage.goto();
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // A signed-in page sends the visitor to log in, without asking the API first.
  await page.goto('/clusters/any/metrics');
  await expect(loginPage.heading()).toBeVisible();
  await page.goto('/unsubscribe');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await page.goto('/accept-invitation');
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await page.waitForLoadState('networkidle');

  expect(failed, 'API answers that failed').toEqual([]);
  expect(errors, 'console errors').toEqual([]);
});
