// What widens a page past the viewport, named for a failure message (used by the layout and first-hour crawls).

/** Elements past the right edge that widen the page: not inside a box that scrolls or clips. */
export function overflowingElements(): string[] {
  const limit = document.documentElement.clientWidth + 0.5;
  const clips = (el: Element) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
  const describe = (el: Element) => {
    const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
    return `${el.tagName.toLowerCase()}${cls} (right edge ${Math.round(el.getBoundingClientRect().right)} px)`;
  };
  const found: string[] = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.getBoundingClientRect().right <= limit) continue;
    const parent = el.parentElement;
    if (parent && parent !== document.body && parent.getBoundingClientRect().right > limit) continue; // not outermost
    let ancestor = el.parentElement;
    let clipped = false;
    while (ancestor && ancestor !== document.body) {
      if (clips(ancestor)) clipped = true;
      ancestor = ancestor.parentElement;
    }
    if (!clipped) found.push(describe(el));
  }
  return found.slice(0, 10);
}
