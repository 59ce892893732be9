/**
 * The discovery agent: finds a site's `/.well-known/ai` manifest, verifies it
 * and its files, and re-verifies pinned bookmarks. Reusable by any client: it
 * imports nothing from service/.
 */
export * from './archive.ts';
export * from './discover.ts';
export * from './fetch.ts';
export * from './format.ts';
export * from './link.ts';
export * from './manifest.ts';
export * from './manifest.schema.ts';
export * from './reverify.ts';
export * from './signature.ts';
export * from './verify.ts';
