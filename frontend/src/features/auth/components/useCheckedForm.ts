import { useEffect, useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { fieldErrorsOf } from '@/api/errors';
import type { FieldErrors } from '../validation';

/**
 * The state of a form checked in the browser before it is sent: its values, each field's message (the browser's
 * check first, then the API's), and a submit that focuses the first field in error or sends the values.
 */
export function useCheckedForm<V extends { [K in keyof V]: string }>({
  initial,
  order,
  validate,
  serverError,
  send,
}: {
  initial: V;
  /** The fields in the order they appear, so the first in error gets the focus. */
  order: (keyof V & string)[];
  validate: (values: V) => FieldErrors<keyof V & string>;
  /** What the last request failed with; its validation details become field messages. */
  serverError: unknown;
  send: (values: V) => void;
}) {
  type Field = keyof V & string;
  const [values, setValues] = useState<V>(initial);
  const [errors, setErrors] = useState<FieldErrors<Field>>({});
  const refs = useRef<Partial<Record<Field, HTMLInputElement | null>>>({});
  const serverFieldErrors = fieldErrorsOf(serverError);

  // The API refused a field: move the focus to it, so its message (tied to the input) is read out.
  useEffect(() => {
    const refused = fieldErrorsOf(serverError);
    const first = order.find((f) => refused[f]);
    if (first) refs.current[first]?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `order` is a constant of each form
  }, [serverError]);

  const field = (name: Field) => ({
    ref: (el: HTMLInputElement | null) => {
      refs.current[name] = el;
    },
    name,
    value: values[name],
    error: errors[name] ?? serverFieldErrors[name],
    onChange: (event: ChangeEvent<HTMLInputElement>) => {
      setValues((v) => ({ ...v, [name]: event.target.value }));
      if (errors[name]) setErrors((e) => ({ ...e, [name]: undefined }));
    },
  });

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const found = validate(values);
    setErrors(found);
    const first = order.find((f) => found[f]);
    if (first) {
      refs.current[first]?.focus();
      return;
    }
    send(values);
  };

  return { field, onSubmit };
}
