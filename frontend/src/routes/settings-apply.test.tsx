import { screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { routes } from '@/router';
import { renderRoutes, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';

const OWNER = { ...SESSION, role: 'owner' as const };
const ADMIN = { ...SESSION, role: 'admin' as const };
const OFF = {
  enabled: false,
  role_arn: null,
  volume_tag_key: null,
  volume_tag_value: null,
  allows: ['Change an EBS volume type (gp2 to gp3), IOPS or throughput, on volumes carrying your tag only.'],
  never: ['Grow or shrink a volume, change an instance type, stop or restart anything.'],
};
const SETUP = {
  external_id: 'headroom-x',
  headroom_account_id: null,
  note: 'Ask your Headroom operator for the account ID.',
  templates: [
    { kind: 'cloudformation', filename: 'headroom-apply-role.cfn.yaml', media_type: 'application/yaml', text: 'x' },
    { kind: 'terraform', filename: 'headroom-apply-role.tf', media_type: 'text/plain', text: 'y' },
  ],
};

describe('Settings › Apply', () => {
  it('shows it off with what it allows, and lets an owner turn it on with a role and a tag', async () => {
    let put: unknown;
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(OWNER)),
      http.get(apiUrl('/org/apply-settings'), () => HttpResponse.json(OFF)),
      http.get(apiUrl('/sources/aws/apply-setup'), () => HttpResponse.json(SETUP)),
      http.put(apiUrl('/org/apply-settings'), async ({ request }) => {
        put = await request.json();
        return HttpResponse.json({ ...OFF, ...(put as object) });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/apply');
    expect(await screen.findByRole('heading', { name: 'Apply is off' })).toBeInTheDocument();
    expect(screen.getByText(/gp2 to gp3/)).toBeInTheDocument();
    expect(screen.getByText(/stop or restart anything/)).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Download the CloudFormation template' })).toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: /Allow Headroom to apply/ }));
    await user.type(screen.getByLabelText('Write role ARN'), 'arn:aws:iam::123456789012:role/HeadroomApply');
    await user.type(screen.getByLabelText('Volume tag key'), 'tikv-data');
    await user.type(screen.getByLabelText('Volume tag value'), 'headroom');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(put).toEqual({
        enabled: true,
        role_arn: 'arn:aws:iam::123456789012:role/HeadroomApply',
        volume_tag_key: 'tikv-data',
        volume_tag_value: 'headroom',
      }),
    );
    expect(await screen.findByText(/apply is on for the organisation/)).toBeInTheDocument();
  });

  it('shows an admin the state without a control', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(ADMIN)),
      http.get(apiUrl('/org/apply-settings'), () => HttpResponse.json(OFF)),
      http.get(apiUrl('/sources/aws/apply-setup'), () => HttpResponse.json(SETUP)),
    );
    renderRoutes(routes, '/settings/apply');
    expect(await screen.findByText(/Only owners can change these/)).toBeInTheDocument();
    expect(screen.queryByRole('checkbox', { name: /Allow Headroom to apply/ })).not.toBeInTheDocument();
  });

  it('lets an admin stop every running plan at once, and says how many stopped', async () => {
    let stops = 0;
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json(ADMIN)),
      http.get(apiUrl('/org/apply-settings'), () => HttpResponse.json(OFF)),
      http.get(apiUrl('/sources/aws/apply-setup'), () => HttpResponse.json(SETUP)),
      http.post(apiUrl('/org/apply-stop'), () => {
        stops += 1;
        return HttpResponse.json({ stopped: stops === 1 ? ['p1', 'p2'] : [] });
      }),
    );
    const { user } = renderRoutes(routes, '/settings/apply');
    const stop = await screen.findByRole('button', { name: 'Stop every run' });
    await user.click(stop);
    expect(await screen.findByText('Stopped 2 running plans.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Stop every run' }));
    expect(await screen.findByText('No plan was running.')).toBeInTheDocument();
    expect(stops).toBe(2);
  });

  it('shows a viewer no stop control', async () => {
    server.use(
      http.get(apiUrl('/auth/me'), () => HttpResponse.json({ ...SESSION, role: 'viewer' as const })),
      http.get(apiUrl('/org/apply-settings'), () => HttpResponse.json(OFF)),
      http.get(apiUrl('/sources/aws/apply-setup'), () => HttpResponse.json(SETUP)),
    );
    renderRoutes(routes, '/settings/apply');
    expect(await screen.findByRole('heading', { name: 'Apply is off' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Stop every run' })).not.toBeInTheDocument();
  });
});
