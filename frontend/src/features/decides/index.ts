export { DecidesIndex } from './components/DecidesIndex';
export { DecidesMarkdown } from './components/DecidesMarkdown';
