export { DecidesArticle } from './components/DecidesArticle';
export { DecidesIndex } from './components/DecidesIndex';
