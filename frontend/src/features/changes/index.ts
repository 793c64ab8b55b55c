export { ChangeLedger } from './components/ChangeLedger';
export { RuleAccuracyList } from './components/RuleAccuracyList';
export { peakText, useChanges, type ChangeEntry, type ChangeLedger as ChangeLedgerData } from './api';
