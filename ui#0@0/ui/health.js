export const health = () => fetch('/health');
