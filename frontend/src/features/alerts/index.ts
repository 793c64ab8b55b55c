export { AlertChannelsPanel } from './components/AlertChannelsPanel';
