export { ChangeLedger } from './components/ChangeLedger';
export { peakText, useChanges, type ChangeEntry, type ChangeLedger as ChangeLedgerData } from './api';
