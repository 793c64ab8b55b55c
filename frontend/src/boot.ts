// The page's first-requests script (src/first-requests.ts): its own entry, which the build puts in index.html with
// `async` before the app's entry (vite.config.ts, firstRequestsScript), so that it runs as soon as it has arrived.
import { startFirstRequests } from './first-requests';

startFirstRequests(window.location, document.documentElement.clientWidth, Date.now());
