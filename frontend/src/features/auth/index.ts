export { fetchSession, safeNextPath, sessionQueryKey, useLoggedOut, useSession, type Session } from './api';
export { LoginForm } from './components/LoginForm';
export { SignupForm } from './components/SignupForm';
export { UserMenu } from './components/UserMenu';
