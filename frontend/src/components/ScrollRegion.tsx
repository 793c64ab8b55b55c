import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';

/**
 * A box whose content may be wider (or taller) than the page allows, a table most often: it scrolls inside
 * itself, never the page. While its content overflows it is a named region in the tab order, so a keyboard user
 * can reach and scroll it (WCAG 2.1.1, axe's scrollable-region-focusable); while everything fits it is a plain
 * box, and adds no tab stop or landmark.
 */
export function ScrollRegion({
  label,
  className = 'table-wrap',
  children,
}: {
  /** What the box holds, e.g. the table's caption ("Findings"). */
  label: string;
  className?: string;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [overflows, setOverflows] = useState(false);

  const observer = useRef<ResizeObserver | null>(null);

  // Measured as the box is first drawn, then whenever the box or its content is resized: the observer reports
  // after the browser has laid the page out, so a render (rows arriving, a filter narrowing the table) forces no
  // layout of its own.
  useLayoutEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () =>
      setOverflows(box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const resized = new ResizeObserver(measure);
    resized.observe(box);
    observer.current = resized;
    return () => {
      resized.disconnect();
      observer.current = null;
    };
  }, []);
  // After every render: content that has replaced the box's children is watched too (observing one already
  // watched does nothing; a newly watched one is reported, so measured, once laid out).
  useLayoutEffect(() => {
    const box = ref.current;
    if (!box || !observer.current) return;
    for (const child of Array.from(box.children)) observer.current.observe(child);
  });

  return (
    <div
      ref={ref}
      className={className}
      {...(overflows ? { role: 'region', 'aria-label': label, tabIndex: 0 } : {})}
    >
      {children}
    </div>
  );
}
