export { OrgApplyPanel } from './components/OrgApplyPanel';
export { ClusterApplyPanel } from './components/ClusterApplyPanel';
export { FindingApplyPlanPanel } from './components/FindingApplyPlanPanel';
