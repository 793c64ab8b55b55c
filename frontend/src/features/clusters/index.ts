export {
  clusterQueryKey,
  clustersQueryKey,
  prefetchClusterForAddress,
  useCluster,
  useClusters,
  useNodes,
  type Cluster,
  type ClusterDetail,
  type TikvNode,
} from './api';
export { AdviseNowButton } from './components/AdviseNowButton';
export { FIRST_ANALYSIS, FirstAnalysisNotice, neverAdvised } from './components/FirstAnalysisNotice';
export { ClusterHeader } from './components/ClusterHeader';
export { ClustersPanel } from './components/ClustersPanel';
export { NodesTable } from './components/NodesTable';
export { ClusterLookbackPanel } from './components/ClusterLookbackPanel';
