// The organisation's source lists as requests, with no React or query library in them: the lists' queries
// (source-lists.ts) and the page's first-requests script (src/boot.ts) build them here, so both ask for the same URLs.
import type { ApiClient } from './client';

export const getAwsConnections = (client: ApiClient) => client.GET('/api/v1/sources/aws');
export const getPrometheusSources = (client: ApiClient) => client.GET('/api/v1/sources/prometheus');
