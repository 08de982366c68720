// Moved to http/views/service.view.ts (shared by every surface); kept for the session routes that import it here.

export * from '../views/service.view.ts';
