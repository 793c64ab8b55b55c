import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { apiUrl, server } from '@/test/server';
import { fetchSession } from './api';

const SESSION = {
  user: { id: 'u1', email: 'sre@example.com', full_name: 'S R E' },
  organization: { id: 'o1', name: 'Example' },
  role: 'owner',
};

function clearCsrfCookie() {
  document.cookie = 'headroom_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/';
}

describe('fetchSession', () => {
  it('asks nothing of the API without the CSRF cookie: a visitor has no session and no 401 is logged', async () => {
    clearCsrfCookie();
    let asked = 0;
    server.use(http.get(apiUrl('/auth/me'), () => {
      asked += 1;
      return HttpResponse.json({ error: { code: 'not_authenticated', message: 'Log in.' } }, { status: 401 });
    }));
    await expect(fetchSession()).resolves.toBeNull();
    expect(asked).toBe(0);
  });

  it('asks /auth/me when the browser holds the cookie, and reads a 401 as no session', async () => {
    let answer: 'valid' | 'expired' = 'valid';
    let asked = 0;
    server.use(http.get(apiUrl('/auth/me'), () => {
      asked += 1;
      return answer === 'valid'
        ? HttpResponse.json(SESSION)
        : HttpResponse.json({ error: { code: 'not_authenticated', message: 'Log in.' } }, { status: 401 });
    }));
    await expect(fetchSession()).resolves.toEqual(SESSION);
    answer = 'expired';
    await expect(fetchSession()).resolves.toBeNull();
    expect(asked).toBe(2);
  });
});
