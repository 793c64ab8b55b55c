import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, createAppQueryClient, createRouter } from './App';
import './styles/global.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// Before the first render: the session's and the page's requests, and the page's code, start when this script ends.
const queryClient = createAppQueryClient();
const router = createRouter();

createRoot(root).render(
  <StrictMode>
    <App queryClient={queryClient} router={router} />
  </StrictMode>,
);
