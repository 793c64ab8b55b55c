import { ROLE_LABEL, ROLES, type Role } from '../api';

/** A labelled role picker for a form, with the API's message for the role field under it. */
export function RoleField({
  id,
  value,
  onChange,
  roles = ROLES,
  error,
}: {
  id: string;
  value: Role;
  onChange: (role: Role) => void;
  roles?: readonly Role[];
  error: string | undefined;
}) {
  return (
    <div className="field">
      <label className="field__label" htmlFor={id}>
        Role
      </label>
      <select id={id} className="field__input" value={value} onChange={(e) => onChange(e.target.value as Role)}>
        {roles.map((r) => (
          <option key={r} value={r}>
            {ROLE_LABEL[r]}
          </option>
        ))}
      </select>
      {error && <p className="field__error">{error}</p>}
    </div>
  );
}
