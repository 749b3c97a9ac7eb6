// Types of graphql-types.mjs, for the test that imports it.
export declare const REPO_DIR: string;
export declare function documentsOf(text: string, path: string): string[];
export declare function generate(): Promise<{ path: string; text: string }[]>;
