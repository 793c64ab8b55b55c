import { screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { apiError, renderWithClient } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { SignupForm } from './SignupForm';

const STARTED = { message: 'Check your email: we have sent you a link to finish creating your account.' };

function setup() {
  const onSuccess = vi.fn();
  const utils = renderWithClient(<SignupForm onSuccess={onSuccess} />);
  return { onSuccess, ...utils };
}

async function fillValid(user: ReturnType<typeof setup>['user']) {
  await user.type(screen.getByLabelText('Email'), 'ada@example.com');
  await user.type(screen.getByLabelText('Password'), 'correct horse battery');
  await user.type(screen.getByLabelText('Organisation name'), 'Analytical Engines');
}

describe('SignupForm', () => {
  it('shows a message per missing field, focuses the first and sends nothing', async () => {
    const seen = vi.fn();
    server.use(http.post(apiUrl('/auth/signup'), () => (seen(), HttpResponse.json(STARTED, { status: 202 }))));
    const { user, onSuccess } = setup();

    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(screen.getByLabelText('Email')).toHaveAccessibleDescription('Enter your email address.');
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription(
      'At least 10 characters. Enter a password.',
    );
    expect(screen.getByLabelText('Organisation name')).toHaveAccessibleDescription(
      "Your team's workspace in Headroom; you can invite colleagues later. Enter your organisation's name.",
    );
    expect(screen.getByLabelText('Email')).toHaveFocus();
    expect(screen.getByLabelText('Email')).toBeInvalid();
    expect(screen.getByLabelText('Full name (optional)')).toBeValid();
    expect(seen).not.toHaveBeenCalled();
    expect(onSuccess).not.toHaveBeenCalled();
  });

  it('rejects a malformed email and a password under 10 characters', async () => {
    const { user } = setup();
    await user.type(screen.getByLabelText('Email'), 'ada.example.com');
    await user.type(screen.getByLabelText('Password'), '123456789');
    await user.type(screen.getByLabelText('Organisation name'), 'Analytical Engines');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(screen.getByText('Enter a valid email address, like name@company.com.')).toBeInTheDocument();
    expect(screen.getByText('Use at least 10 characters.')).toBeInTheDocument();
    expect(screen.getByLabelText('Organisation name')).toBeValid();
  });

  it('posts the form and hands the "check your email" answer on', async () => {
    let body: unknown;
    server.use(
      http.post(apiUrl('/auth/signup'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(STARTED, { status: 202 });
      }),
    );
    const { user, onSuccess } = setup();
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    await waitFor(() => expect(onSuccess).toHaveBeenCalledTimes(1));
    expect(onSuccess.mock.calls[0]?.[0]).toEqual(STARTED);
    // An empty optional name is left out; the API defaults it.
    expect(body).toEqual({
      email: 'ada@example.com',
      password: 'correct horse battery',
      organization_name: 'Analytical Engines',
    });
  });

  it("shows the API's message when it refuses the sign-up", async () => {
    server.use(
      http.post(apiUrl('/auth/signup'), () =>
        HttpResponse.json(apiError('rate_limited', 'Too many attempts; try again later.'), { status: 429 }),
      ),
    );
    const { user, onSuccess } = setup();
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('Too many attempts; try again later.');
    expect(onSuccess).not.toHaveBeenCalled();
    expect(screen.getByRole('button', { name: 'Create account' })).toBeEnabled();
  });

  it('puts server validation messages next to their fields', async () => {
    server.use(
      http.post(apiUrl('/auth/signup'), () =>
        HttpResponse.json(
          apiError('validation_error', 'Some fields are not valid.', [
            { field: 'password', message: 'This password appears in a list of leaked passwords.' },
          ]),
          { status: 422 },
        ),
      ),
    );
    const { user } = setup();
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('Some fields are not valid.');
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription(
      'At least 10 characters. This password appears in a list of leaked passwords.',
    );
  });

  it('shows a refused address once, beside the Email field, and puts the focus there', async () => {
    const problem =
      'not a valid email address: ada.test is a special-use domain (like .test, .invalid, .local or localhost: RFC 6761) that can never receive email; use an address at a real domain';
    server.use(
      http.post(apiUrl('/auth/signup'), () =>
        HttpResponse.json(apiError('validation_error', `email: ${problem}`, [{ field: 'email', message: problem }]), {
          status: 422,
        }),
      ),
    );
    const { user } = setup();
    await user.type(screen.getByLabelText('Email'), 'someone@ada.test');
    await user.type(screen.getByLabelText('Password'), 'correct horse battery');
    await user.type(screen.getByLabelText('Organisation name'), 'Analytical Engines');
    await user.click(screen.getByRole('button', { name: 'Create account' }));

    const email = screen.getByLabelText('Email');
    await waitFor(() => expect(email).toBeInvalid());
    expect(email).toHaveAccessibleDescription(
      'Not a valid email address: ada.test is a special-use domain (like .test, .invalid, .local or localhost: RFC 6761) that can never receive email; use an address at a real domain',
    );
    expect(email).toHaveFocus();
    expect(screen.getAllByText(/special-use domain/)).toHaveLength(1);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('still shows an error that is not about a field at the top', async () => {
    server.use(
      http.post(apiUrl('/auth/signup'), () =>
        HttpResponse.json(apiError('rate_limited', 'Too many sign-ups from here; try again in a minute.'), {
          status: 429,
        }),
      ),
    );
    const { user } = setup();
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Too many sign-ups from here; try again in a minute.');
  });
});
