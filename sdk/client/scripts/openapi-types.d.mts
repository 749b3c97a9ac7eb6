// Types of openapi-types.mjs, for the test that imports it.
export const DOCUMENT_PATH: string;
export const TYPES_PATH: string;
export function generate(): Promise<{ document: string; types: string }>;
