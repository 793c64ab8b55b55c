import { FormError } from '@/components/FormError';
import { TextField } from '@/components/TextField';
import { useAcceptInvitation, type Session } from '../api';
import { validateInvitation, type InvitationValues } from '../validation';
import { useCheckedForm } from './useCheckedForm';

/** Join an organisation from an invitation link: a new account chooses a password, an existing one enters its own. */
export function AcceptInvitationForm({ token, onSuccess }: { token: string; onSuccess: (session: Session) => void }) {
  const accept = useAcceptInvitation();
  const { field, onSubmit } = useCheckedForm<InvitationValues>({
    initial: { full_name: '', password: '' },
    order: ['full_name', 'password'],
    validate: validateInvitation,
    serverError: accept.error,
    send: (values) => accept.mutate({ token, full_name: values.full_name.trim(), password: values.password }, { onSuccess }),
  });

  return (
    <form className="form" onSubmit={onSubmit} noValidate aria-label="Accept the invitation">
      <FormError error={accept.error} />
      <TextField {...field('full_name')} label="Your name (optional)" autoComplete="name" />
      <TextField
        {...field('password')}
        label="Password"
        type="password"
        autoComplete="new-password"
        hint="New to Headroom: choose one (at least 10 characters). Already have an account: your password."
        required
      />
      <button type="submit" className="button button--primary button--block" disabled={accept.isPending}>
        {accept.isPending ? 'Joining…' : 'Join the organisation'}
      </button>
    </form>
  );
}
