import './digest.css';
export { DigestSettingsPanel } from './components/DigestSettingsPanel';
export { VerifyEmailBanner } from './components/VerifyEmailBanner';
