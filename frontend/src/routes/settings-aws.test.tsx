import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { AWS_BACKFILL_RUNNING, AWS_CONNECTION, AWS_ID, EXTERNAL_ID, HEALTH_FAILING, ORG, sweep } from './settings-fixtures';

const VIEWER = { ...SESSION, role: 'viewer' as const };
const HEADROOM_ACCOUNT = '123456789012';
const CFN_FILLED = `Parameters:\n  ExternalId:\n    Type: String\n    Default: "${EXTERNAL_ID}"\n`;
const TF_FILLED = `variable "external_id" {\n  type        = string\n  default     = "${EXTERNAL_ID}"\n}\n`;

function awsSetup(accountId: string | null) {
  return {
    external_id: EXTERNAL_ID,
    headroom_account_id: accountId,
    note: accountId
      ? null
      : "This installation's HEADROOM_AWS_ACCOUNT_ID is not set, so the templates leave Headroom's account ID for you to fill in; ask your Headroom operator for it.",
    templates: [
      { kind: 'cloudformation' as const, filename: 'headroom-readonly-role.cfn.yaml', media_type: 'application/yaml', text: CFN_FILLED },
      { kind: 'terraform' as const, filename: 'headroom-readonly-role.tf', media_type: 'text/plain', text: TF_FILLED },
    ],
  };
}

function readBlob(blob: Blob): Promise<string> {
  // jsdom's Blob has no text(): read it the old way.
  return new Promise<string>((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.readAsText(blob);
  });
}

function detailHandlers() {
  return [
    http.get(apiUrl(`/sources/aws/${AWS_ID}`), () => HttpResponse.json(AWS_CONNECTION)),
    http.get(apiUrl(`/sources/aws/${AWS_ID}/backfill`), () => HttpResponse.json(AWS_BACKFILL_RUNNING)),
    http.get(apiUrl(`/sources/aws/${AWS_ID}/sweeps`), () =>
      HttpResponse.json([
        sweep({ id: 3, region: 'us-east-1', started_at: '2026-11-21T09:31:00Z', metrics_requested: 600, api_calls: 2 }),
        sweep({ id: 2, region: 'eu-west-1', started_at: '2026-11-21T09:31:00Z', metrics_requested: 400, api_calls: 1 }),
        sweep({ id: 1, kind: 'backfill', region: 'us-east-1', metrics_requested: 20_000, api_calls: 40, retries: 2 }),
      ]),
    ),
  ];
}

describe('Settings › AWS connection', () => {
  it('names each missing IAM permission when the connection test fails', async () => {
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)), ...detailHandlers());
    let tested = 0;
    server.use(
      http.post(apiUrl(`/sources/aws/${AWS_ID}/test`), () => {
        tested += 1;
        return HttpResponse.json({
          ok: false,
          region: 'us-east-1',
          checks: [
            { action: 'ec2:DescribeInstances', ok: true, error_code: null, message: null },
            {
              action: 'ec2:DescribeVolumes',
              ok: false,
              error_code: 'UnauthorizedOperation',
              message: 'You are not authorized to perform this operation.',
            },
            { action: 'cloudwatch:GetMetricData', ok: false, error_code: 'AccessDenied', message: 'User is not authorized' },
          ],
          missing: ['ec2:DescribeVolumes', 'cloudwatch:GetMetricData'],
          error: null,
        });
      }),
    );
    const { user } = renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    expect(await screen.findByRole('heading', { name: 'prod-account', level: 1 })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Test connection' }));

    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(tested).toBe(1);
    expect(within(result).getByText('Missing permissions: ec2:DescribeVolumes, cloudwatch:GetMetricData')).toBeInTheDocument();
    const table = within(result).getByRole('table', { name: 'IAM permission checks' });
    const volumes = within(table).getByRole('row', { name: /ec2:DescribeVolumes/ });
    expect(within(volumes).getByText('Fail')).toBeInTheDocument();
    expect(
      within(volumes).getByText('UnauthorizedOperation: You are not authorized to perform this operation.'),
    ).toBeInTheDocument();
    expect(within(within(table).getByRole('row', { name: /ec2:DescribeInstances/ })).getByText('Pass')).toBeInTheDocument();
  });

  it('shows a test that could not reach AWS at all with its reason', async () => {
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)), ...detailHandlers());
    server.use(
      http.post(apiUrl(`/sources/aws/${AWS_ID}/test`), () =>
        HttpResponse.json({
          ok: false,
          region: null,
          checks: [],
          missing: [],
          error: 'AssumeRole failed: AccessDenied (check the trust policy and external ID)',
        }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(result).toHaveTextContent(
      'The connection failed: AssumeRole failed: AccessDenied (check the trust policy and external ID)',
    );
  });

  it('shows backfill progress in datapoints and the sweeps with their CloudWatch cost', async () => {
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)), ...detailHandlers());
    renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    const bar = await screen.findByRole('progressbar', { name: 'CloudWatch history import' });
    expect(bar).toHaveAttribute('aria-valuenow', '1200');
    expect(bar).toHaveAttribute('aria-valuemax', '4800');
    expect(screen.getByText('1,200 / 4,800 datapoints')).toBeInTheDocument();
    expect(screen.getByText('Running')).toBeInTheDocument();

    const table = await screen.findByRole('table', { name: 'Collection sweeps' });
    const backfill = within(table).getAllByRole('row')[3]!;
    expect(within(backfill).getByText('20,000')).toBeInTheDocument();
    expect(within(backfill).getByText('$0.20')).toBeInTheDocument();
    expect(within(backfill).getByText('one-off')).toBeInTheDocument();
    expect(within(backfill).getByText('(2 retries)')).toBeInTheDocument();
    // 600 metrics a minute: 0.006 USD a sweep, x 43,200 minutes = 259.20 USD a month.
    const useast = within(table).getAllByRole('row')[1]!;
    expect(within(useast).getByText('$0.0060')).toBeInTheDocument();
    expect(within(useast).getByText('$259.20')).toBeInTheDocument();
    // Both regions every minute: (600 + 400) / 1000 x 0.01 x 43,200 = 432 USD.
    const estimate = screen.getByText('$432.00 / month');
    expect(estimate).toHaveAttribute('title', expect.stringContaining('USD 0.01 per 1,000 metrics requested'));
    expect(estimate).toHaveAccessibleDescription(expect.stringContaining('https://aws.amazon.com/cloudwatch/pricing/'));
  });

  it('starts the history import again when it is done', async () => {
    let started: unknown;
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)), ...detailHandlers());
    // Later server.use() calls take precedence over the defaults above.
    server.use(
      http.get(apiUrl(`/sources/aws/${AWS_ID}/backfill`), () =>
        HttpResponse.json({ ...AWS_BACKFILL_RUNNING, state: 'done', points_done: 4800, finished_at: '2026-11-21T09:40:00Z' }),
      ),
      http.post(apiUrl(`/sources/aws/${AWS_ID}/backfill`), async ({ request }) => {
        started = await request.json();
        return HttpResponse.json({ ...AWS_BACKFILL_RUNNING, state: 'queued', points_done: 0, queued: true }, { status: 202 });
      }),
    );
    const { user } = renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    expect(await screen.findByText('4,800 / 4,800 datapoints')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Import history again' }));
    expect(await screen.findByText('Queued')).toBeInTheDocument();
    expect(started).toEqual({ days: 14 });
  });

  it('marks a demo source as simulated and says its test asked nothing of AWS', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl(`/sources/aws/${AWS_ID}`), () =>
        HttpResponse.json({ ...AWS_CONNECTION, name: 'Demo AWS account', is_demo: true }),
      ),
      http.get(apiUrl(`/sources/aws/${AWS_ID}/backfill`), () =>
        HttpResponse.json({ ...AWS_BACKFILL_RUNNING, state: 'done', days: 7, points_done: 4800 }),
      ),
      http.post(apiUrl(`/sources/aws/${AWS_ID}/test`), () =>
        HttpResponse.json({
          ok: true,
          region: 'us-east-1',
          checks: [
            {
              action: 'ec2:DescribeVolumes',
              ok: true,
              error_code: null,
              message: 'demo source: not asked of AWS (the simulator stands in for it)',
            },
          ],
          missing: [],
          error: null,
          import_started: false,
          demo: true,
        }),
      ),
      ...detailHandlers(),
    );
    const { user } = renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    expect(await screen.findByRole('heading', { name: 'Demo AWS account', level: 1 })).toBeInTheDocument();
    expect(screen.getByText('AWS connection · demo (simulated)')).toBeInTheDocument();
    expect(screen.getByRole('note')).toHaveTextContent('This source is simulated');
    expect(screen.getByRole('note')).toHaveTextContent('nothing here is asked of AWS');
    // Its history is the simulator's: no import button.
    expect(await screen.findByText('Done')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Import history/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Test connection' }));
    const result = await screen.findByRole('region', { name: 'Test result' });
    expect(result).toHaveTextContent('Demo source: every check passes without calling AWS');
  });

  it('says when a passing test started the history import', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      ...detailHandlers(),
      http.post(apiUrl(`/sources/aws/${AWS_ID}/test`), () =>
        HttpResponse.json({ ok: true, region: 'us-east-1', checks: [], missing: [], error: null, import_started: true }),
      ),
    );
    const { user } = renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    expect(await screen.findByText('The 14-day CloudWatch history import has started.')).toBeInTheDocument();
  });

  it('shows a viewer the health but no test, import or remove controls', async () => {
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(VIEWER)), ...detailHandlers());
    server.use(
      http.get(apiUrl(`/sources/aws/${AWS_ID}`), () => HttpResponse.json({ ...AWS_CONNECTION, health: HEALTH_FAILING })),
    );
    renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    expect(await screen.findByText('Unhealthy')).toBeInTheDocument();
    await screen.findByRole('progressbar');
    expect(screen.queryByRole('button', { name: 'Test connection' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Import history/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Remove connection' })).not.toBeInTheDocument();
  });

  it('shows a 404 for a connection of another organisation', async () => {
    server.use(http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)), ...detailHandlers());
    server.use(
      http.get(apiUrl(`/sources/aws/${AWS_ID}`), () =>
        HttpResponse.json(apiError('not_found', 'AWS connection not found.'), { status: 404 }),
      ),
    );
    renderRoutes(routes, `/settings/sources/aws/${AWS_ID}`);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the AWS connection');
    expect(alert).toHaveTextContent('AWS connection not found.');
  });
});

describe('Settings › Connect AWS account', () => {
  function connectHandlers(accountId: string | null = HEADROOM_ACCOUNT) {
    return [
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/org'), () => HttpResponse.json(ORG)),
      http.get(apiUrl('/sources/aws/setup'), () => HttpResponse.json(awsSetup(accountId))),
      ...detailHandlers(),
    ];
  }

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("shows the external ID and Headroom's account ID inside the trust policy and the commands", async () => {
    server.use(...connectHandlers());
    renderRoutes(routes, '/settings/sources/aws/new');
    expect(await screen.findByLabelText('External ID')).toHaveTextContent(EXTERNAL_ID);
    expect(screen.getByLabelText('Headroom AWS account ID')).toHaveTextContent(HEADROOM_ACCOUNT);
    const trust = JSON.parse(screen.getByLabelText('Trust policy').textContent ?? '');
    expect(trust.Statement[0].Condition.StringEquals['sts:ExternalId']).toBe(EXTERNAL_ID);
    expect(trust.Statement[0].Principal.AWS).toBe(`arn:aws:iam::${HEADROOM_ACCOUNT}:root`);
    expect(screen.getByLabelText('Permissions policy')).toHaveTextContent('cloudwatch:GetMetricData');
    const cfn = screen.getByLabelText('CloudFormation command');
    expect(cfn).toHaveTextContent('--template-file headroom-readonly-role.cfn.yaml');
    expect(cfn).toHaveTextContent(`HeadroomAccountId=${HEADROOM_ACCOUNT} ExternalId=${EXTERNAL_ID}`);
    expect(screen.getByLabelText('Terraform command')).toHaveTextContent(`-var headroom_account_id=${HEADROOM_ACCOUNT}`);
    expect(screen.getByLabelText('Terraform command')).toHaveTextContent(`-var external_id=${EXTERNAL_ID}`);
    expect(document.body).not.toHaveTextContent('<HEADROOM_AWS_ACCOUNT_ID>');
    expect(screen.getByRole('button', { name: 'Download headroom-trust-policy.json' })).toBeInTheDocument();
  });

  it('downloads the templates the API filled in, under their file names', async () => {
    const blobs: Blob[] = [];
    Object.assign(URL, {
      createObjectURL: vi.fn((blob: Blob) => {
        blobs.push(blob);
        return 'blob:template';
      }),
      revokeObjectURL: vi.fn(),
    });
    const names: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      names.push(this.download);
    });
    server.use(...connectHandlers());
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    const downloads = await screen.findByRole('group', { name: 'Template downloads' });
    await user.click(within(downloads).getByRole('button', { name: /CloudFormation template/ }));
    await user.click(within(downloads).getByRole('button', { name: /Terraform file/ }));
    expect(names).toEqual(['headroom-readonly-role.cfn.yaml', 'headroom-readonly-role.tf']);
    expect(await readBlob(blobs[0] as Blob)).toBe(CFN_FILLED);
    expect(blobs[0]?.type).toBe('application/yaml');
    expect(await readBlob(blobs[1] as Blob)).toBe(TF_FILLED);
  });

  it("says why Headroom's account ID is missing and keeps the placeholder in the trust policy", async () => {
    server.use(...connectHandlers(null));
    renderRoutes(routes, '/settings/sources/aws/new');
    expect(await screen.findByRole('note')).toHaveTextContent('HEADROOM_AWS_ACCOUNT_ID is not set');
    expect(screen.queryByLabelText('Headroom AWS account ID')).not.toBeInTheDocument();
    const trust = JSON.parse(screen.getByLabelText('Trust policy').textContent ?? '');
    expect(trust.Statement[0].Principal.AWS).toBe('arn:aws:iam::<HEADROOM_AWS_ACCOUNT_ID>:root');
    expect(trust.Statement[0].Condition.StringEquals['sts:ExternalId']).toBe(EXTERNAL_ID);
  });

  it('shows the error when the setup cannot be loaded, and retries', async () => {
    let calls = 0;
    server.use(...connectHandlers());
    // Later server.use() calls take precedence.
    server.use(
      http.get(apiUrl('/sources/aws/setup'), () => {
        calls += 1;
        return calls === 1
          ? HttpResponse.json(apiError('internal_error', 'Something broke.'), { status: 500 })
          : HttpResponse.json(awsSetup(HEADROOM_ACCOUNT));
      }),
    );
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load your external ID');
    expect(alert).toHaveTextContent('Something broke.');
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByLabelText('External ID')).toHaveTextContent(EXTERNAL_ID);
  });

  it('puts the API message, in words, next to the role ARN field once', async () => {
    const expected =
      "expected an IAM role ARN like arn:aws:iam::123456789012:role/HeadroomReadOnly (arn:aws:iam::, the 12-digit account ID, :role/ and the role's name)";
    server.use(
      ...connectHandlers(),
      http.post(apiUrl('/sources/aws'), () =>
        HttpResponse.json(
          apiError('validation_error', `role_arn: ${expected}`, [{ field: 'role_arn', message: expected }]),
          { status: 422 },
        ),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    await user.type(await screen.findByLabelText('Name'), 'prod-account');
    await user.type(screen.getByLabelText('Role ARN'), 'arn:aws:iam::12:role/x');
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    const field = screen.getByLabelText('Role ARN');
    await waitFor(() => expect(field).toBeInvalid());
    expect(field).toHaveAccessibleDescription(
      "Expected an IAM role ARN like arn:aws:iam::123456789012:role/HeadroomReadOnly (arn:aws:iam::, the 12-digit account ID, :role/ and the role's name)",
    );
    // Once, beside the field: no banner repeating it, and no regular expression anywhere.
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.getAllByText(/expected an IAM role ARN/i)).toHaveLength(1);
    expect(document.body).not.toHaveTextContent('pattern');
  });

  it('opens the new connection with the test run as it was saved', async () => {
    const failedOnSave = {
      ok: false,
      region: 'us-east-1',
      checks: [],
      missing: [],
      error:
        "This Headroom server has no AWS credentials of its own, so it cannot assume your role: calling sts:AssumeRole takes the server's own credentials.",
      import_started: false,
      demo: false,
    };
    server.use(
      http.post(apiUrl('/sources/aws'), () =>
        HttpResponse.json({ ...AWS_CONNECTION, health: HEALTH_FAILING, test: failedOnSave }, { status: 201 }),
      ),
      http.get(apiUrl(`/sources/aws/${AWS_ID}/backfill`), () =>
        HttpResponse.json({ ...AWS_BACKFILL_RUNNING, state: 'not_started', points_done: 0, points_total: 0 }),
      ),
      ...connectHandlers(),
    );
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    await user.type(await screen.findByLabelText('Name'), 'prod-account');
    await user.type(screen.getByLabelText('Role ARN'), AWS_CONNECTION.role_arn!);
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    expect(await screen.findByRole('heading', { name: 'Tested when saved' })).toBeInTheDocument();
    const result = screen.getByRole('region', { name: 'Test result' });
    expect(result).toHaveTextContent('This Headroom server has no AWS credentials of its own');
    expect(result).toHaveTextContent('Nothing is imported until a test passes');
    expect(await screen.findByText(/it starts once a connection test passes/)).toBeInTheDocument();
  });

  it('checks regions before sending, then connects with the role and opens the connection', async () => {
    let body: unknown;
    server.use(
      ...connectHandlers(),
      http.post(apiUrl('/sources/aws'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(AWS_CONNECTION, { status: 201 });
      }),
    );
    const { user, router } = renderRoutes(routes, '/settings/sources/aws/new');
    await user.type(await screen.findByLabelText('Name'), 'prod-account');
    await user.type(screen.getByLabelText('Role ARN'), AWS_CONNECTION.role_arn!);
    const regions = screen.getByLabelText('Regions');
    await user.clear(regions);
    await user.type(regions, 'us-east-1, Frankfurt');
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    expect(regions).toHaveAccessibleDescription(expect.stringContaining('"Frankfurt" is not an AWS region code'));
    expect(body).toBeUndefined();

    await user.clear(regions);
    await user.type(regions, 'us-east-1, eu-west-1');
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    expect(await screen.findByRole('heading', { name: 'prod-account', level: 1 })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe(`/settings/sources/aws/${AWS_ID}`);
    expect(body).toEqual({
      name: 'prod-account',
      auth_kind: 'assume_role',
      role_arn: AWS_CONNECTION.role_arn,
      regions: ['us-east-1', 'eu-west-1'],
    });
  });

  it('takes static keys with a password field and shows only that a secret is stored', async () => {
    let body: Record<string, unknown> = {};
    const stored = {
      ...AWS_CONNECTION,
      auth_kind: 'static_keys' as const,
      role_arn: null,
      access_key_id: 'AKIAEXAMPLEKEY12',
      has_secret: true,
    };
    server.use(...connectHandlers());
    server.use(
      http.get(apiUrl(`/sources/aws/${AWS_ID}`), () => HttpResponse.json(stored)),
      http.post(apiUrl('/sources/aws'), async ({ request }) => {
        body = (await request.json()) as Record<string, unknown>;
        return HttpResponse.json(stored, { status: 201 });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    await user.click(await screen.findByRole('radio', { name: /Access keys/ }));
    // The role's trust policy is gone (no external ID with keys); the user still gets only the read-only policy.
    expect(screen.queryByLabelText('Trust policy')).not.toBeInTheDocument();
    expect(screen.getByLabelText('Permissions policy')).toHaveTextContent('ec2:DescribeVolumes');
    await user.type(screen.getByLabelText('Name'), 'prod-account');
    await user.type(screen.getByLabelText('Access key ID'), 'AKIAEXAMPLEKEY12');
    const secret = screen.getByLabelText('Secret access key');
    expect(secret).toHaveAttribute('type', 'password');
    await user.type(secret, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    await waitFor(() => expect(body.secret_access_key).toBe('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'));
    expect(await screen.findByText('(secret stored, hidden)')).toBeInTheDocument();
    expect(document.body).not.toHaveTextContent('wJalrXUtnFEMI');
  });
});
