import './sources.css';
export { sourcesKeys, type AwsTestReport } from './api';
export { AwsConnectionDetail } from './components/AwsConnectionDetail';
export { ConnectAwsForm } from './components/ConnectAwsForm';
export { PrometheusDetail } from './components/PrometheusDetail';
export { PrometheusForm } from './components/PrometheusForm';
export { SourcesOverview } from './components/SourcesOverview';
