export { appliesTo, flattenConfig, useConfigNodes, useNodeConfig, type ConfigNode, type PendingChange } from './api';
export { NodeConfigView } from './components/NodeConfigView';
