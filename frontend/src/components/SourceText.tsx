import { Fragment } from 'react';

const URL = /(https:\/\/[^\s)]+)/g;

/**
 * A source as the API gives it ("AWS: Amazon EBS volume types (https://docs.aws.amazon.com/...)"), with its
 * links clickable; a Headroom threshold page ("docs/thresholds/cost.md") stays text.
 */
export function SourceText({ text }: { text: string }) {
  const parts = text.split(URL);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <a key={i} className="source-link" href={part} target="_blank" rel="noreferrer noopener">
            {part}
          </a>
        ) : (
          <Fragment key={i}>{part}</Fragment>
        ),
      )}
    </>
  );
}
