/** A growth projection's method in words: the API gives its code ("ets-daily"), which no reader should see. The
 * same words as the backend's findings (headroom.domain.words.METHOD_WORDS). */
const METHOD_WORDS: Record<string, string> = {
  'ets-weekly': 'weekly seasonal trend',
  'ets-daily': 'daily seasonal trend',
  holt: 'trend',
  'theil-sen': 'robust line (short history)',
  constant: 'flat',
};

/** "weekly seasonal trend"; an unknown code is said as "trend", never shown. */
export function methodWords(method: string): string {
  return METHOD_WORDS[method] ?? 'trend';
}
