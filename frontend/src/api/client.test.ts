import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { apiUrl, server } from '@/test/server';
import { api, readCookie } from './client';
import { ApiError, unwrap } from './errors';

describe('readCookie', () => {
  it('finds a cookie among others and decodes it', () => {
    expect(readCookie('headroom_csrf', 'a=1; headroom_csrf=tok%3D%3D; b=2')).toBe('tok==');
    expect(readCookie('headroom_csrf', 'headroom_csrf_old=x')).toBeUndefined();
  });
});

describe('api client', () => {
  it('echoes the CSRF cookie on writes and not on reads', async () => {
    document.cookie = 'headroom_csrf=s3cr3t-token; path=/';
    const seen: Record<string, string | null> = {};
    server.use(
      http.post(apiUrl('/auth/logout'), ({ request }) => {
        seen.post = request.headers.get('X-CSRF-Token');
        return new HttpResponse(null, { status: 204 });
      }),
      http.get(apiUrl('/clusters'), ({ request }) => {
        seen.get = request.headers.get('X-CSRF-Token');
        return HttpResponse.json({ items: [], total: 0 });
      }),
    );

    await unwrap(api.POST('/api/v1/auth/logout'));
    await expect(unwrap(api.GET('/api/v1/clusters'))).resolves.toEqual({ items: [], total: 0 });
    expect(seen).toEqual({ post: 's3cr3t-token', get: null });
  });

  it('turns the error envelope into an ApiError with code, message and field errors', async () => {
    server.use(
      http.post(apiUrl('/clusters'), () =>
        HttpResponse.json(
          {
            error: {
              code: 'validation_error',
              message: 'Some fields are not valid.',
              details: [{ field: 'body.tikv_version', message: 'Not a TiKV version.' }],
            },
          },
          { status: 422 },
        ),
      ),
    );
    const error = await unwrap(
      api.POST('/api/v1/clusters', { body: { name: 'c1', tikv_version: 'x', deployment_kind: 'tiup' } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect([apiError.status, apiError.code, apiError.message]).toEqual([422, 'validation_error', 'Some fields are not valid.']);
    expect(apiError.fieldErrors()).toEqual({ tikv_version: 'Not a TiKV version.' });
  });
});
