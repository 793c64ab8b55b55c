import { screen, waitFor } from '@testing-library/react';
import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { NETWORK_ERROR_MESSAGE } from '@/api/errors';
import { apiError, renderWithClient, SESSION } from '@/test/render';
import { apiUrl, server } from '@/test/server';
import { LoginForm } from './LoginForm';

function setup() {
  const onSuccess = vi.fn();
  return { onSuccess, ...renderWithClient(<LoginForm onSuccess={onSuccess} />) };
}

async function submit(user: ReturnType<typeof setup>['user'], email: string, password: string) {
  if (email) await user.type(screen.getByLabelText('Email'), email);
  if (password) await user.type(screen.getByLabelText('Password'), password);
  await user.click(screen.getByRole('button', { name: 'Log in' }));
}

describe('LoginForm', () => {
  it('asks for the email and the password before sending anything', async () => {
    const { user } = setup();
    await submit(user, '', '');
    expect(screen.getByLabelText('Email')).toHaveAccessibleDescription('Enter your email address.');
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription('Enter your password.');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('clears a field message as soon as the field is edited', async () => {
    const { user } = setup();
    await submit(user, '', '');
    await user.type(screen.getByLabelText('Password'), 'x');
    expect(screen.getByLabelText('Password')).not.toHaveAccessibleDescription();
    expect(screen.getByLabelText('Email')).toHaveAccessibleDescription('Enter your email address.');
  });

  it('logs in and hands the session on', async () => {
    server.use(http.post(apiUrl('/auth/login'), () => HttpResponse.json(SESSION)));
    const { user, onSuccess } = setup();
    await submit(user, 'ada@example.com', 'correct horse battery');
    await waitFor(() => expect(onSuccess).toHaveBeenCalledTimes(1));
    expect(onSuccess.mock.calls[0]?.[0]).toEqual(SESSION);
  });

  it.each([
    [401, 'invalid_credentials', 'Email or password is incorrect.'],
    [429, 'rate_limited', 'Too many attempts. Try again in 5 minutes.'],
  ])('shows the API message for HTTP %i %s', async (status, code, message) => {
    server.use(http.post(apiUrl('/auth/login'), () => HttpResponse.json(apiError(code, message), { status })));
    const { user, onSuccess } = setup();
    await submit(user, 'ada@example.com', 'wrong password!');
    expect(await screen.findByRole('alert')).toHaveTextContent(message);
    expect(onSuccess).not.toHaveBeenCalled();
  });

  it('says so when the server cannot be reached', async () => {
    server.use(http.post(apiUrl('/auth/login'), () => HttpResponse.error()));
    const { user } = setup();
    await submit(user, 'ada@example.com', 'correct horse battery');
    expect(await screen.findByRole('alert')).toHaveTextContent(NETWORK_ERROR_MESSAGE);
  });

  it('falls back to the HTTP status when the error body is not the API shape', async () => {
    server.use(http.post(apiUrl('/auth/login'), () => new HttpResponse('<html>Bad gateway</html>', { status: 502 })));
    const { user } = setup();
    await submit(user, 'ada@example.com', 'correct horse battery');
    expect(await screen.findByRole('alert')).toHaveTextContent('The server answered with HTTP 502.');
  });
});
