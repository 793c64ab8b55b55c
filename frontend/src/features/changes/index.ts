export { ChangeLedger } from './components/ChangeLedger';
export { peakText, useChanges, valueText, type ChangeEntry, type ChangeLedger as ChangeLedgerData } from './api';
