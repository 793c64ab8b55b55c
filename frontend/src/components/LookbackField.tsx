import { LOOKBACK_CHOICES, lookbackLabel, type LookbackDays } from '@/lib/lookback';

/**
 * A labelled lookback picker: 14, 32 or 93 days; with `inheritLabel`, also "inherit" (null), e.g. a cluster
 * taking its organisation's choice.
 */
export function LookbackField({
  id,
  value,
  onChange,
  inheritLabel,
  disabled,
  error,
}: {
  id: string;
  value: LookbackDays | null;
  onChange: (days: LookbackDays | null) => void;
  inheritLabel?: string;
  disabled?: boolean;
  error?: string;
}) {
  return (
    <div className="field">
      <label className="field__label" htmlFor={id}>
        Lookback
      </label>
      <select
        id={id}
        className="field__input"
        value={value === null ? '' : String(value)}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        onChange={(e) => onChange(e.target.value === '' ? null : (Number(e.target.value) as LookbackDays))}
      >
        {inheritLabel !== undefined && <option value="">{inheritLabel}</option>}
        {LOOKBACK_CHOICES.map((d) => (
          <option key={d} value={String(d)}>
            {lookbackLabel(d)}
            {d === 14 ? ' (default)' : ''}
          </option>
        ))}
      </select>
      {error && <p className="field__error">{error}</p>}
    </div>
  );
}
