import './settings.css';
export { atLeast, type Role } from './api';
export { AuditLogPanel } from './components/AuditLogPanel';
export { InvitationsPanel } from './components/InvitationsPanel';
export { MembersPanel } from './components/MembersPanel';
export { TokensPanel } from './components/TokensPanel';
export { RecommendationPreferencesPanel } from './components/RecommendationPreferencesPanel';
