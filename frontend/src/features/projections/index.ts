export { daysText, projectionTitle, useProjections, type Projection, type ProjectionList } from './api';
export { NextCeilings } from './components/NextCeilings';
