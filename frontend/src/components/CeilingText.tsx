import type { components } from '@/api/schema';
import { SourceText } from './SourceText';

export type Ceiling = components['schemas']['Ceiling'];

/** What each kind of ceiling means, in the words of the domain's Ceiling (holds indefinitely, while credits last...). */
export const CEILING_KIND: Record<Ceiling['kind'], string> = {
  sustained: 'sustained',
  burst: 'burst: only while credits last',
  provisioned: 'provisioned',
  configured: 'configured setting',
};

/**
 * A ceiling as the API gives it: its label, kind and public source (a link when the source has one). The source is
 * the API's own: no component works out where a number comes from.
 */
export function CeilingText({ ceiling }: { ceiling: Ceiling }) {
  return (
    <span className="ceiling-text" aria-label={`${ceiling.label}, ${CEILING_KIND[ceiling.kind]}`}>
      {ceiling.label} <span className="muted">({CEILING_KIND[ceiling.kind]})</span>
      <span className="muted small">
        {' '}
        source: <SourceText text={ceiling.source} />
      </span>
    </span>
  );
}
