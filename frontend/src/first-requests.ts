// A signed-in page's first requests, started by src/boot.ts: a script of a few kilobytes that index.html loads beside
// the app's entry and that runs as soon as it has arrived, while the app's code (React, the router, the pages:
// about 110 KB compressed) is still arriving and being run. The app's own first requests (router.tsx, each route's
// handle.prefetch) leave only when its entry script has run; each one whose URL this started takes the answer under
// way (api/client.ts, earlyClient) instead of asking again. Only requests whose URL the address alone decides are
// started here, built by the same functions as the app's (each feature's requests.ts), so both ask for the same URL.
import { CSRF_COOKIE, earlyClient, readCookie } from '@/api/client';
import { getAwsConnections, getPrometheusSources } from '@/api/source-requests';
import { getApplySettings } from '@/features/apply/requests';
import { getChanges } from '@/features/changes/requests';
import {
  clusterAddress,
  getCluster,
  getClusterPreferences,
  getNodes,
  overviewAddress,
} from '@/features/clusters/requests';
import {
  ACTIVE_FINDINGS,
  ACTIVE_FINDINGS_SORT,
  findingAddress,
  getEvidenceSeries,
  getFinding,
  getFindings,
} from '@/features/findings/requests';
import { getNodeMetrics, getOverview, metricsAddress } from '@/features/metrics/requests';
import { getProjectionDays } from '@/features/projections/requests';

/**
 * Start the first requests of the page `address` opens, for a browser with a session (the API sets its CSRF cookie
 * with it; a visitor's requests would answer 401, which the browser logs as errors): the cluster of a cluster's
 * page, an overview's eight others (router.tsx's overviewPage), a Metrics tab's panels and overview (`viewportPx`
 * wide, at `nowMs`), a finding and its evidence series.
 */
export function startFirstRequests(address: { pathname: string; search: string }, viewportPx: number, nowMs: number) {
  if (readCookie(CSRF_COOKIE) === undefined) return;
  const clusterId = clusterAddress(address.pathname);
  if (clusterId !== null) void getCluster(earlyClient, clusterId);
  const overviewOf = overviewAddress(address.pathname);
  if (overviewOf !== null) {
    void getChanges(earlyClient, overviewOf);
    void getClusterPreferences(earlyClient, overviewOf);
    void getApplySettings(earlyClient, overviewOf);
    void getNodes(earlyClient, overviewOf);
    void getAwsConnections(earlyClient);
    void getPrometheusSources(earlyClient);
    void getFindings(earlyClient, overviewOf, ACTIVE_FINDINGS, ACTIVE_FINDINGS_SORT);
    void getProjectionDays(earlyClient, overviewOf);
  }
  const view = metricsAddress(address, viewportPx, nowMs);
  if (view !== null) {
    void getNodeMetrics(earlyClient, view.clusterId, view.nodeId, view.window, false, view.points);
    void getOverview(earlyClient, view.clusterId, view.window);
  }
  const findingId = findingAddress(address.pathname);
  if (findingId !== null) {
    void getFinding(earlyClient, findingId);
    void getEvidenceSeries(earlyClient, findingId);
  }
}
