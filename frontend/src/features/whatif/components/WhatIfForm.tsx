import type { ReactNode } from 'react';
import { settingText } from '@/lib/change';
import {
  VOLUME_TYPES,
  instanceRow,
  iopsApplies,
  throughputApplies,
  tikvRow,
  volumeRow,
  type Choices,
  type InstanceRow,
  type Row,
  type RowErrors,
  type TikvRow,
  type VolumeRow,
} from '../form';

function Field({
  id,
  label,
  error,
  hint,
  children,
}: {
  id: string;
  label: string;
  error?: string;
  hint?: string;
  children: ReactNode;
}) {
  return (
    <div className={error ? 'field field--invalid' : 'field'}>
      <label className="field__label" htmlFor={id}>
        {label}
      </label>
      {children}
      {hint && !error && <p className="field__hint">{hint}</p>}
      {error && (
        <p className="field__error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

const described = (id: string, error?: string) => (error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {});

function VolumeEditor({
  row,
  choices,
  errors,
  onChange,
}: {
  row: VolumeRow;
  choices: Choices;
  errors: Partial<Record<string, string>>;
  onChange: (row: VolumeRow) => void;
}) {
  const vol = choices.volumes.find((v) => v.volumeId === row.volumeId);
  const id = (f: string) => `${row.id}-${f}`;
  return (
    <div className="whatif-row__fields">
      <Field id={id('volume')} label="Volume" error={errors.volume}>
        <select
          id={id('volume')}
          className="field__input"
          value={row.volumeId}
          onChange={(e) => {
            const next = choices.volumes.find((v) => v.volumeId === e.target.value);
            if (next) onChange({ ...volumeRow(next), id: row.id });
          }}
        >
          {choices.volumes.map((v) => (
            <option key={v.volumeId} value={v.volumeId}>
              {v.label}
            </option>
          ))}
        </select>
      </Field>
      <Field id={id('type')} label="Type" error={errors.type}>
        <select
          id={id('type')}
          className="field__input"
          value={row.type}
          onChange={(e) => onChange({ ...row, type: e.target.value })}
        >
          {VOLUME_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </Field>
      <Field id={id('size')} label="Size (GiB)" error={errors.size}>
        <input
          id={id('size')}
          className="field__input"
          inputMode="numeric"
          value={row.size}
          onChange={(e) => onChange({ ...row, size: e.target.value })}
          {...described(id('size'), errors.size)}
        />
      </Field>
      <Field
        id={id('iops')}
        label="IOPS"
        error={errors.iops}
        hint={iopsApplies(row.type) ? (vol?.iops === null ? 'blank: the type’s default' : undefined) : `${row.type}: set by the size`}
      >
        <input
          id={id('iops')}
          className="field__input"
          inputMode="numeric"
          disabled={!iopsApplies(row.type)}
          value={iopsApplies(row.type) ? row.iops : ''}
          onChange={(e) => onChange({ ...row, iops: e.target.value })}
          {...described(id('iops'), errors.iops)}
        />
      </Field>
      <Field
        id={id('throughput')}
        label="Throughput (MiB/s)"
        error={errors.throughput}
        hint={throughputApplies(row.type) ? undefined : `${row.type}: set by the type and size`}
      >
        <input
          id={id('throughput')}
          className="field__input"
          inputMode="decimal"
          disabled={!throughputApplies(row.type)}
          value={throughputApplies(row.type) ? row.throughput : ''}
          onChange={(e) => onChange({ ...row, throughput: e.target.value })}
          {...described(id('throughput'), errors.throughput)}
        />
      </Field>
    </div>
  );
}

function InstanceEditor({
  row,
  choices,
  errors,
  onChange,
}: {
  row: InstanceRow;
  choices: Choices;
  errors: Partial<Record<string, string>>;
  onChange: (row: InstanceRow) => void;
}) {
  const id = (f: string) => `${row.id}-${f}`;
  return (
    <div className="whatif-row__fields">
      <Field id={id('instance')} label="Instance" error={errors.instance}>
        <select
          id={id('instance')}
          className="field__input"
          value={row.instanceId}
          onChange={(e) => {
            const next = choices.instances.find((i) => i.instanceId === e.target.value);
            if (next) onChange({ ...instanceRow(next), id: row.id });
          }}
        >
          {choices.instances.map((i) => (
            <option key={i.instanceId} value={i.instanceId}>
              {i.label}
            </option>
          ))}
        </select>
      </Field>
      <Field id={id('type')} label="Instance type" error={errors.type}>
        <input
          id={id('type')}
          className="field__input"
          value={row.type}
          spellCheck={false}
          autoCapitalize="off"
          onChange={(e) => onChange({ ...row, type: e.target.value })}
          {...described(id('type'), errors.type)}
        />
      </Field>
    </div>
  );
}

function TikvEditor({
  row,
  choices,
  errors,
  onChange,
}: {
  row: TikvRow;
  choices: Choices;
  errors: Partial<Record<string, string>>;
  onChange: (row: TikvRow) => void;
}) {
  const id = (f: string) => `${row.id}-${f}`;
  return (
    <div className="whatif-row__fields">
      <Field id={id('node')} label="Node">
        <select
          id={id('node')}
          className="field__input"
          value={row.node}
          onChange={(e) => onChange({ ...row, node: e.target.value })}
        >
          <option value="">every node</option>
          {choices.nodes.map((n) => (
            <option key={n.ref} value={n.ref}>
              {n.storeAddress}
            </option>
          ))}
        </select>
      </Field>
      <Field id={id('key')} label="TiKV key" error={errors.key}>
        <input
          id={id('key')}
          className="field__input mono"
          placeholder="storage.block-cache.capacity"
          spellCheck={false}
          autoCapitalize="off"
          value={row.key}
          onChange={(e) => onChange({ ...row, key: e.target.value })}
          {...described(id('key'), errors.key)}
        />
      </Field>
      <Field id={id('value')} label="Value" error={errors.value}>
        <input
          id={id('value')}
          className="field__input mono"
          placeholder="4GiB"
          spellCheck={false}
          autoCapitalize="off"
          value={row.value}
          onChange={(e) => onChange({ ...row, value: e.target.value })}
          {...described(id('value'), errors.value)}
        />
      </Field>
    </div>
  );
}

const TITLES = { volume: 'Volume', instance: 'Instance', tikv: 'TiKV key', other: 'Change' } as const;

/** The changes to try, one row per volume, instance or TiKV key; the API's refusal shows on its row. */
export function WhatIfForm({
  rows,
  choices,
  errors,
  apiError,
  onChange,
}: {
  rows: Row[];
  choices: Choices;
  errors: RowErrors;
  /** The API's message for one row (the change it refused). */
  apiError: { rowId: string; message: string } | null;
  onChange: (rows: Row[]) => void;
}) {
  const replace = (next: Row) => onChange(rows.map((r) => (r.id === next.id ? next : r)));
  const first = { volume: choices.volumes[0], instance: choices.instances[0] };
  return (
    <div className="whatif-form">
      {rows.length === 0 && <p className="muted">Add a change to see what it would do.</p>}
      <ol className="plain-list whatif-rows">
        {rows.map((row, index) => (
          <li key={row.id}>
            <fieldset className="whatif-row" aria-invalid={apiError?.rowId === row.id || undefined}>
              <legend>
                {index + 1}. {TITLES[row.kind]}
              </legend>
              {row.kind === 'volume' && (
                <VolumeEditor row={row} choices={choices} errors={errors[row.id] ?? {}} onChange={replace} />
              )}
              {row.kind === 'instance' && (
                <InstanceEditor row={row} choices={choices} errors={errors[row.id] ?? {}} onChange={replace} />
              )}
              {row.kind === 'tikv' && (
                <TikvEditor row={row} choices={choices} errors={errors[row.id] ?? {}} onChange={replace} />
              )}
              {row.kind === 'other' && (
                <p className="mono whatif-row__other">
                  {row.change.key} = {settingText(row.change.proposed, row.change.key)}
                </p>
              )}
              {apiError?.rowId === row.id && (
                <p className="field__error" role="alert">
                  {apiError.message}
                </p>
              )}
              <button
                type="button"
                className="button button--secondary whatif-row__remove"
                aria-label={`Remove change ${index + 1}`}
                onClick={() => onChange(rows.filter((r) => r.id !== row.id))}
              >
                Remove
              </button>
            </fieldset>
          </li>
        ))}
      </ol>
      <div className="toolbar">
        <button
          type="button"
          className="button button--secondary"
          disabled={!first.volume}
          onClick={() => first.volume && onChange([...rows, volumeRow(first.volume)])}
        >
          Add a volume change
        </button>
        <button
          type="button"
          className="button button--secondary"
          disabled={!first.instance}
          onClick={() => first.instance && onChange([...rows, instanceRow(first.instance)])}
        >
          Add an instance change
        </button>
        <button type="button" className="button button--secondary" onClick={() => onChange([...rows, tikvRow()])}>
          Add a TiKV key
        </button>
      </div>
    </div>
  );
}
