export {
  fetchSession,
  safeNextPath,
  sessionQueryKey,
  useConfirmSignup,
  useLoggedOut,
  useSession,
  type Session,
  type SignupStarted,
} from './api';
export { AcceptInvitationForm } from './components/AcceptInvitationForm';
export { LoginForm } from './components/LoginForm';
export { SignupForm } from './components/SignupForm';
export { UserMenu } from './components/UserMenu';
