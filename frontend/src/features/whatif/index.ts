import './whatif.css';

export { useWhatIf, type WhatIfAnswer } from './api';
export { WhatIfPanel } from './components/WhatIfPanel';
export type { Choices, InstanceChoice, NodeChoice, VolumeChoice } from './form';
