export {
  attachmentName,
  patchNodes,
  patchesKey,
  useCreatePatch,
  usePatch,
  usePatches,
  type Patch,
  type PatchFormat,
} from './api';
export { DiffView } from './components/DiffView';
export { DownloadButtons } from './components/DownloadButtons';
export { PatchDetail, PatchDetailPanel } from './components/PatchDetail';
export { PatchDiff } from './components/PatchDiff';
export { PatchesPanel, patchPath } from './components/PatchesPanel';
