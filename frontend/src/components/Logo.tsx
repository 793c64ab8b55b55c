/** The Headroom mark: a usage line under a ceiling. */
export function Logo({ withName = true }: { withName?: boolean }) {
  return (
    <span className="logo">
      <svg className="logo__mark" viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" focusable="false">
        <rect width="32" height="32" rx="7" fill="#1f4e8c" />
        <path d="M7 23h18" stroke="#9cc3f5" strokeWidth="2.5" strokeLinecap="round" />
        <path
          d="M7 18l5-5 4 3 7-7"
          fill="none"
          stroke="#fff"
          strokeWidth="2.5"
          strokeLinecap="round"
          strokeLinejoin="round"
        />
      </svg>
      {withName && <span className="logo__name">Headroom</span>}
    </span>
  );
}
