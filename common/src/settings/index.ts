export * from './effective-settings.js';
export * from './email-settings.js';
export * from './frontend-links.js';
export * from './setting-catalogue.js';
export * from './setting-types.js';
export * from './setting-validation.js';
