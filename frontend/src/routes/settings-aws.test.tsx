import { screen, waitFor, within } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { apiError, renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { AWS_BACKFILL_RUNNING, AWS_CONNECTION, AWS_ID, EXTERNAL_ID, HEALTH_FAILING, ORG, sweep } from './settings-fixtures';

const VIEWER = { ...SESSION, role: 'viewer' as const };

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
    expect(estimate).toHaveAccessibleDescription(expect.stringContaining('domain.md §3.3'));
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
  function connectHandlers() {
    return [
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(SESSION)),
      http.get(apiUrl('/org'), () => HttpResponse.json(ORG)),
      ...detailHandlers(),
    ];
  }

  it('shows the external ID inside the trust policy and the shipped templates', async () => {
    server.use(...connectHandlers());
    renderRoutes(routes, '/settings/sources/aws/new');
    expect(await screen.findByLabelText('External ID')).toHaveTextContent(EXTERNAL_ID);
    const trust = screen.getByLabelText('Trust policy');
    expect(JSON.parse(trust.textContent ?? '').Statement[0].Condition.StringEquals['sts:ExternalId']).toBe(EXTERNAL_ID);
    expect(screen.getByLabelText('Permissions policy')).toHaveTextContent('cloudwatch:GetMetricData');
    expect(screen.getByLabelText('CloudFormation command')).toHaveTextContent(
      `--template-file deploy/aws/headroom-readonly-role.cfn.yaml`,
    );
    expect(screen.getByLabelText('CloudFormation command')).toHaveTextContent(`ExternalId=${EXTERNAL_ID}`);
    expect(screen.getByLabelText('Terraform command')).toHaveTextContent(`-var external_id=${EXTERNAL_ID}`);
    expect(screen.getByRole('button', { name: 'Download headroom-trust-policy.json' })).toBeInTheDocument();
  });

  it('puts the API validation message next to the role ARN field', async () => {
    server.use(
      ...connectHandlers(),
      http.post(apiUrl('/sources/aws'), () =>
        HttpResponse.json(
          apiError('validation_error', 'role_arn: String should match pattern', [
            { field: 'role_arn', message: "String should match pattern '^arn:aws[a-z-]*:iam::[0-9]{12}:role/...'" },
          ]),
          { status: 422 },
        ),
      ),
    );
    const { user } = renderRoutes(routes, '/settings/sources/aws/new');
    await user.type(await screen.findByLabelText('Name'), 'prod-account');
    await user.type(screen.getByLabelText('Role ARN'), 'arn:aws:iam::12:role/x');
    await user.click(screen.getByRole('button', { name: 'Connect AWS account' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Some fields are not valid');
    expect(screen.getByLabelText('Role ARN')).toHaveAccessibleDescription(
      "String should match pattern '^arn:aws[a-z-]*:iam::[0-9]{12}:role/...'",
    );
    expect(screen.getByLabelText('Role ARN')).toBeInvalid();
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
