import './digest.css';
export { DigestSettingsPanel } from './components/DigestSettingsPanel';
export { VerifyEmailBanner } from './components/VerifyEmailBanner';
export { MyDigestPreferences } from './components/MyDigestPreferences';
export { UnsubscribePanel } from './components/UnsubscribePanel';
