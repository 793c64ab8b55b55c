import { Link } from 'react-router';
import { usePageTitle } from '@/lib/usePageTitle';

export default function NotFoundPage() {
  usePageTitle('Page not found');
  return (
    <main className="page page--narrow">
      <h1>Page not found</h1>
      <p>There is nothing at this address.</p>
      <p>
        <Link to="/clusters">Go to your clusters</Link>
      </p>
    </main>
  );
}
