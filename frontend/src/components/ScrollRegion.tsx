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

  // After every render (rows arrive, a filter narrows the table) and whenever the box or its content is resized.
  useLayoutEffect(() => {
    const box = ref.current;
    if (!box) return;
    const measure = () =>
      setOverflows(box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    for (const child of Array.from(box.children)) observer.observe(child);
    return () => observer.disconnect();
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
