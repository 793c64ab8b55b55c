export { clustersQueryKey, useClusters, type Cluster } from './api';
export { ClustersPanel } from './components/ClustersPanel';
