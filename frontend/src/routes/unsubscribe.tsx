import { useSearchParams } from 'react-router';
import { UnsubscribePanel } from '@/features/digest';
import { usePageTitle } from '@/lib/usePageTitle';

/** /unsubscribe?token=…: the page an email's unsubscribe link opens (no log-in). */
export default function UnsubscribePage() {
  usePageTitle('Unsubscribe');
  const [params] = useSearchParams();
  return <UnsubscribePanel token={params.get('token') ?? ''} />;
}
