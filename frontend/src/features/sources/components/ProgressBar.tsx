interface ProgressBarProps {
  label: string;
  done: number;
  total: number;
  /** The text after the bar, e.g. "1,200 / 4,000 datapoints". */
  valueText: string;
}

/** An accessible progress bar (role=progressbar with its value text). */
export function ProgressBar({ label, done, total, valueText }: ProgressBarProps) {
  const pct = total > 0 ? Math.min(100, Math.max(0, (done / total) * 100)) : 0;
  return (
    <div className="progress">
      <div
        className="progress__track"
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={total > 0 ? total : 100}
        aria-valuenow={total > 0 ? Math.min(done, total) : 0}
        aria-valuetext={valueText}
      >
        <div className="progress__fill" style={{ width: `${pct.toFixed(1)}%` }} />
      </div>
      <span className="progress__text">{valueText}</span>
    </div>
  );
}
